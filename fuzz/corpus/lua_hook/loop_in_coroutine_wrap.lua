-- Hostile: coroutine.wrap threads are budgeted as well
-- expect: hook-error
-- expect-kind: budget
-- expect-message: instruction budget
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local f = coroutine.wrap(function() while true do end end)
  f()
  return true
end
