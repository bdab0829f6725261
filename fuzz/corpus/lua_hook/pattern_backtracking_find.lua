-- Hostile: string.find with many .- backtracks exponentially
-- expect: hook-error
-- expect-kind: budget
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local s = string.rep("a", 64)
  return string.find(s, ".-.-.-.-.-.-.-.-.-.-.-.-.-.-.-b") ~= nil
end
