-- Hostile: table.move over a trillion empty slots
-- expect: hook-error
-- expect-kind: budget
-- normal: yes
-- expect-line: 9

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  table.move({}, 1, 1e12, 2)
  return true
end
