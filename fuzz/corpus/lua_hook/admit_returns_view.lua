-- Hostile: admit returns a view as the reason
-- expect: hook-error
-- expect-kind: bad-return
-- expect-message: reason
-- normal: yes
-- expect-line: 8

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  return false, w
end
