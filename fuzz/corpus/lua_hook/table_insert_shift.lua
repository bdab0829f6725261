-- Hostile: inserting at the front of a big table in a loop
-- expect: hook-error
-- expect-kind: budget
-- limits: instructions=10000000
-- normal: yes
-- expect-line: 11

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local t = {string.byte(string.rep("x", 100000), 1, -1)}
  for i = 1, 1e9 do table.insert(t, 1, i) end
  return true
end
