-- Hostile: a single huge string
-- expect: hook-error
-- expect-kind: memory
-- expect-message: memory limit
-- normal: yes
-- expect-line: 0

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local s = string.rep("x", 1 << 30)
  return true, s
end
