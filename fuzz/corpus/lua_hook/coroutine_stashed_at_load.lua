-- Hostile: a coroutine created while loading keeps running under the budget
-- expect: hook-error
-- expect-kind: budget
-- normal: yes
-- expect-line: 10

local co = coroutine.wrap(function() while true do coroutine.yield() end end)
function admit(w)
  if w.mode == "normal" then return true, "normal" end
  while true do co() end
end
