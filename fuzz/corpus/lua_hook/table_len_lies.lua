-- Hostile: __len claims a billion elements to make table.insert loop in C
-- expect: hook-error
-- expect-kind: budget
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local t = setmetatable({}, {__len = function() return 1e9 end})
  table.insert(t, 1, "x")
  return true
end
