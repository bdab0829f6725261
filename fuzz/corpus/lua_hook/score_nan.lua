-- Hostile: a NaN score
-- expect: hook-error
-- expect-kind: bad-return
-- expect-message: NaN
-- normal: yes
-- expect-line: 8

function score(w, c)
  if w.mode == "normal" then return 1 end
  return 0 / 0
end
