-- Hostile: hooks are per thread: a coroutine must be budgeted too
-- expect: hook-error
-- expect-kind: budget
-- normal: yes
-- expect-line: 9

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local co = coroutine.create(function() while true do end end)
  coroutine.resume(co)
  while true do end
end
