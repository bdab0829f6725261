-- Hostile: a multi-megabyte reason is truncated
-- expect: ok
-- normal: yes

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  return false, string.rep("no", 1 << 20)
end
