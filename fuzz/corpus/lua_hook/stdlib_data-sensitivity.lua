-- Confidential data: encryption at rest and every required certification.
-- params.requiredCertifications: list of certification names the cluster must hold.

local function has(list, wanted)
  for _, item in ipairs(list) do
    if item == wanted then return true end
  end
  return false
end

function filter(w, c, p)
  if w.data.sensitivity ~= "confidential" then return true end
  if not c.attributes.encryptionAtRest then
    return false, "confidential data needs encryption at rest"
  end
  for _, cert in ipairs(p.requiredCertifications) do
    if not has(c.attributes.certifications, cert) then
      return false, "confidential data needs certification " .. cert
    end
  end
  return true
end
