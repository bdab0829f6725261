-- Hostile: an infinite loop inside a hook
-- expect: hook-error
-- expect-kind: budget
-- expect-message: instruction budget
-- normal: yes
-- expect-line: 11

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local n = 0
  while true do n = n + 1 end
end
