-- Hostile: an __index metamethod that never returns
-- expect: hook-error
-- expect-kind: budget
-- normal: yes
-- expect-line: 7

local t = setmetatable({}, {__index = function(t, k) while true do end end})
function admit(w)
  if w.mode == "normal" then return true, "normal" end
  return t.x
end
