-- Hostile: a budget error inside a coroutine cannot be caught and ignored
-- expect: hook-error
-- expect-kind: budget
-- expect-message: instruction budget
-- normal: yes
-- expect-line: 11

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  for i = 1, 1e9 do
    local co = coroutine.create(function() while true do end end)
    coroutine.resume(co)
  end
  return true
end
