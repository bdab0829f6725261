-- Score in [0, 1]: older GPUs for small work, newest for final training.

local function best_generation(w, c, p)
  local newest, oldest, max_known = nil, nil, 0
  for _, gen in pairs(p.generations) do
    if gen > max_known then max_known = gen end
  end
  for _, model in ipairs(c.gpuModels) do
    local allowed = #w.resources.gpuModels == 0
    for _, m in ipairs(w.resources.gpuModels) do
      if m == model then allowed = true end
    end
    local gen = p.generations[model]
    if allowed and gen ~= nil then
      if newest == nil or gen > newest then newest = gen end
      if oldest == nil or gen < oldest then oldest = gen end
    end
  end
  return newest, oldest, max_known
end

function score(w, c, p)
  local newest, oldest, max_known = best_generation(w, c, p)
  if newest == nil or max_known == 0 then return 0 end
  local small = w.type == "inference" or w.resources.fractional or w.durationHint < p.smallHours * 3600
  local final = w.type == "training" and (w.labels.stage == "final" or w.priority >= p.finalPriority)
  if small then return (max_known - oldest) / max_known end
  if final then return newest / max_known end
  return 0
end
