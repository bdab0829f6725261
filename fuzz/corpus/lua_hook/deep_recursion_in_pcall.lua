-- Hostile: recursion through pcall stops at the C stack limit; the policy catches it and the call stays bounded
-- expect: ok
-- normal: yes

local function dive(n) local ok = pcall(dive, n + 1) return ok end
function admit(w)
  if w.mode == "normal" then return true, "normal" end
  dive(1)
  return true
end
