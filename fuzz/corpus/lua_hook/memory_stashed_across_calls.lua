-- Hostile: a file-level table that grows on every call hits the cap, never the host
-- expect: hook-error
-- expect-kind: memory
-- calls: 4
-- limits: memory=4194304
-- normal: yes
-- expect-line: 0

local keep = {}
function admit(w)
  if w.mode == "normal" then return true, "normal" end
  for i = 1, 16 do keep[#keep + 1] = string.rep("y", 1 << 16) .. #keep end
  return true
end
