-- Hostile: replacing _ENV's metatable to unfreeze globals
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: protected metatable
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  setmetatable(_ENV, {})
  return true
end
