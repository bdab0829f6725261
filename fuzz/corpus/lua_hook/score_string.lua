-- Hostile: a score that is a string
-- expect: hook-error
-- expect-kind: bad-return
-- expect-message: got string
-- normal: yes
-- expect-line: 8

function score(w, c)
  if w.mode == "normal" then return 1 end
  return "100"
end
