-- Hostile: a table that grows without end
-- expect: hook-error
-- expect-kind: memory
-- limits: instructions=1000000000
-- normal: yes
-- expect-line: 0

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local t = {}
  for i = 1, 1e12 do t[i] = {i} end
  return true
end
