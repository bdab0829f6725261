-- Hostile: a counter kept in a global between decisions
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: globals are read-only
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  counter = (counter or 0) + 1
  return counter < 10
end
