-- Hostile: assigning a field on a string value
-- expect: hook-error
-- expect-kind: runtime
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local s = "abc"
  s.upper = print
  return true
end
