-- Hostile: an infinite score
-- expect: hook-error
-- expect-kind: bad-return
-- expect-message: -inf
-- normal: yes
-- expect-line: 8

function score(w, c)
  if w.mode == "normal" then return 1 end
  return -math.huge
end
