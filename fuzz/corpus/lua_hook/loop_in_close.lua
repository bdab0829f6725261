-- Hostile: a __close handler that loops during error unwinding
-- expect: hook-error
-- expect-kind: budget
-- normal: yes
-- expect-line: 9

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local guard <close> = setmetatable({}, {__close = function() while true do end end})
  error("unwind")
end
