-- Price ceilings by priority class, and a maxCost for every cloud placement.

-- The cheapest price per GPU-hour among the models the workload accepts, or nil.
local function cheapest(w, c)
  local best = nil
  for model, price in pairs(c.pricing.gpuHour) do
    local allowed = #w.resources.gpuModels == 0
    for _, m in ipairs(w.resources.gpuModels) do
      if m == model then allowed = true end
    end
    if allowed and (best == nil or price < best) then best = price end
  end
  return best
end

function filter(w, c, p)
  if p.requireMaxCostForCloud and not c.onprem and w.maxCost == nil then
    return false, "cloud placements need a maxCost"
  end
  local ceiling = p.maxGpuHourPrice[w.priorityClass]
  if ceiling ~= nil then
    local price = cheapest(w, c)
    if price ~= nil and price > ceiling then
      return false, string.format("%s work is capped at %.2f per GPU-hour; cheapest here is %.2f",
                                  w.priorityClass, ceiling, price)
    end
  end
  return true
end
