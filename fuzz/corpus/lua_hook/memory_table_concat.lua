-- Hostile: table.concat with a huge separator
-- expect: hook-error
-- expect-kind: memory
-- normal: yes
-- expect-line: 0

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local t = {}
  for i = 1, 100 do t[i] = "x" end
  return true, table.concat(t, string.rep("-", 1 << 20))
end
