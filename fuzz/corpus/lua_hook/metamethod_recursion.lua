-- Hostile: recursion through __index, which nests C calls
-- expect: hook-error
-- normal: yes
-- expect-line: 6

local t = setmetatable({}, {__index = function(t, k) return t[k .. 'x'] end})
function admit(w)
  if w.mode == "normal" then return true, "normal" end
  return t.a
end
