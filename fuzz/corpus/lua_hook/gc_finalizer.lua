-- Hostile: a __gc finalizer would run outside any budget: refused
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: __gc
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  setmetatable({}, {__gc = function() while true do end end})
  return true
end
