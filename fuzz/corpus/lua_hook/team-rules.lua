-- Rules YAML cannot say: they look at prices and lists, and compute.
-- w and c are read-only views of the workload and the cluster: every field is listed in
-- docs/policy-reference.md (`gpufed docs lua`).

local MAX_INFERENCE_GPUS = 4
local LOW_PRIORITY = 500          -- below "normal"
local PRICE_CEILING = 3.00        -- per GPU-hour, for low-priority work

-- Inference services scale out with replicas, not with bigger pods.
function admit(w)
  if w.type == "inference" and w.resources.totalGpus > MAX_INFERENCE_GPUS then
    return false, "inference is limited to " .. MAX_INFERENCE_GPUS .. " GPUs per replica; add replicas instead"
  end
  return true
end

-- The cheapest GPU this cluster offers among the models the workload accepts.
local function cheapest_allowed_price(w, c)
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

-- Low-priority work never runs on premium-priced GPUs.
function filter(w, c)
  if w.priority < LOW_PRIORITY and not c.onprem then
    local price = cheapest_allowed_price(w, c)
    if price ~= nil and price > PRICE_CEILING then
      return false, string.format("low-priority work avoids GPUs above %.2f/h (cheapest here %.2f/h)", PRICE_CEILING, price)
    end
  end
  return true
end

-- Data gravity: prefer the cluster that already holds the dataset, more so for big data.
function score(w, c)
  if w.data.dataset == "" then return 0 end
  for _, d in ipairs(c.datasets) do
    if d == w.data.dataset then
      local gib = w.data.size / 2^30
      return math.min(2, 0.5 + gib / 1000)
    end
  end
  return 0
end
