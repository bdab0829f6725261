-- PII and sensitivity classes map to the compliance zones they may be processed in.

local function contains(list, wanted)
  for _, item in ipairs(list) do
    if item == wanted then return true end
  end
  return false
end

function filter(w, c, p)
  if w.data.pii and not contains(p.piiZones, c.zone) then
    return false, "PII may only be processed in zones " .. table.concat(p.piiZones, ", ") .. "; cluster is in " .. c.zone
  end
  local zones = p.zonesBySensitivity[w.data.sensitivity]
  if zones ~= nil and not contains(zones, c.zone) then
    return false, w.data.sensitivity .. " data may only be processed in zones " .. table.concat(zones, ", ")
  end
  return true
end
