-- Hostile: a goto loop
-- expect: hook-error
-- expect-kind: budget
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  ::again::
  goto again
end
