-- Hostile: filter returns nothing
-- expect: hook-error
-- expect-kind: bad-return
-- expect-message: got nil
-- normal: yes
-- expect-line: 8

function filter(w, c)
  if w.mode == "normal" then return true, "normal" end
end
