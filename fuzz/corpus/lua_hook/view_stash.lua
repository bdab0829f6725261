-- Hostile: a view stashed in an upvalue is dead in the next call
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: after the hook call
-- calls: 2
-- normal: yes
-- expect-line: 12

local saved
function admit(w)
  if w.mode == "normal" then return true, "normal" end
  if saved then return true, saved.name end
  saved = w.resources
  return true
end
