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

-- The caps' currency: params.currency, else the cluster's own. A cluster priced in
-- another currency is judged through the repository's exchange rates
-- (c.pricing.rates); without a rate for the pair it fails closed.
function filter(w, c, p)
  if p.requireMaxCostForCloud and not c.onprem and w.maxCost == nil then
    return false, "cloud placements need a maxCost"
  end
  local ceiling = p.maxGpuHourPrice[w.priorityClass]
  if ceiling ~= nil then
    local price = cheapest(w, c)
    if price == nil then return true end
    local currency = p.currency
    if currency == nil or currency == "" then currency = c.pricing.currency end
    local rate = 1
    if currency ~= c.pricing.currency then rate = (c.pricing.rates or {})[currency] end
    if rate == nil then
      return false, string.format("%s work is capped at %.2f %s per GPU-hour; this cluster prices in %s and no " ..
                                  "exchange rate converts it", w.priorityClass, ceiling, currency, c.pricing.currency)
    end
    local converted = price * rate
    if converted > ceiling then
      local shown = string.format("%.2f %s", price, c.pricing.currency)
      if currency ~= c.pricing.currency then
        shown = shown .. string.format(" (%.2f %s)", converted, currency)
      end
      return false, string.format("%s work is capped at %.2f %s per GPU-hour; cheapest here is %s",
                                  w.priorityClass, ceiling, currency, shown)
    end
  end
  return true
end
