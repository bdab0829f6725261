-- Hostile: yielding out of the hook itself
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: outside a coroutine
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  coroutine.yield(1)
  return true
end
