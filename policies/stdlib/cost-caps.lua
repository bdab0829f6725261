-- Price ceilings by priority class, and a maxCost for every cloud placement.

-- The price of one GPU-hour on a pool, as the placer prices it: the spot price on spot
-- capacity where the cluster quotes one, else the on-demand price; nil when unpriced.
local function pool_price(c, pool)
  local model = pool.gpu.model
  if pool.spot and c.pricing.spotGpuHour[model] ~= nil then return c.pricing.spotGpuHour[model] end
  return c.pricing.gpuHour[model]
end

-- Whether the workload could use the pool at all: a model it accepts, and spot capacity
-- only when it allows spot.
local function usable(w, pool)
  if pool.spot and not w.spot then return false end
  if #w.resources.gpuModels == 0 then return true end
  for _, m in ipairs(w.resources.gpuModels) do
    if m == pool.gpu.model then return true end
  end
  return false
end

-- The caps' currency: params.currency, else the cluster's own. A cluster priced in
-- another currency is judged through the repository's exchange rates
-- (c.pricing.rates); without a rate for the pair it fails closed.
-- The ceiling is judged per pool: the pools over it are denied (the third value), so
-- the placer binds, and prices, only a pool within it; a cluster none of whose usable
-- pools is within it is denied.
function filter(w, c, p)
  if p.requireMaxCostForCloud and not c.onprem and w.maxCost == nil then
    return false, "cloud placements need a maxCost"
  end
  local ceiling = p.maxGpuHourPrice[w.priorityClass]
  if ceiling == nil then return true end
  local currency = p.currency
  if currency == nil or currency == "" then currency = c.pricing.currency end
  local rate = 1
  if currency ~= c.pricing.currency then rate = (c.pricing.rates or {})[currency] end
  if rate == nil then
    return false, string.format("%s work is capped at %.2f %s per GPU-hour; this cluster prices in %s and no " ..
                                "exchange rate converts it", w.priorityClass, ceiling, currency, c.pricing.currency)
  end
  local function shown(price)
    local text = string.format("%.2f %s", price, c.pricing.currency)
    if currency ~= c.pricing.currency then text = text .. string.format(" (%.2f %s)", price * rate, currency) end
    return text
  end
  local over, within, cheapest = {}, false, nil
  for _, pool in ipairs(c.nodePools) do
    if usable(w, pool) then
      local price = pool_price(c, pool)
      if price == nil or price * rate <= ceiling then
        within = true
      else
        over[pool.name] = string.format("%s work is capped at %.2f %s per GPU-hour; this pool costs %s",
                                        w.priorityClass, ceiling, currency, shown(price))
        if cheapest == nil or price < cheapest then cheapest = price end
      end
    end
  end
  if not within and cheapest ~= nil then
    return false, string.format("%s work is capped at %.2f %s per GPU-hour; cheapest here is %s",
                                w.priorityClass, ceiling, currency, shown(cheapest))
  end
  return true, nil, over
end
