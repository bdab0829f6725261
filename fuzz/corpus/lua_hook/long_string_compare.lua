-- Hostile: comparing megabyte strings in a loop: cheap in instructions, slow in time
-- expect: hook-error
-- limits: instructions=1000000000 wall_time_ms=200
-- normal: yes
-- expect-line: any

local a, b = string.rep("x", 1 << 22), string.rep("x", 1 << 22)
function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local same = 0
  for i = 1, 1e6 do if a == b then same = same + 1 end end
  return true
end
