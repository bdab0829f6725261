-- Hostile: doubling a string with .. until memory runs out
-- expect: hook-error
-- expect-kind: memory
-- normal: yes
-- expect-line: 0

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local s = "x"
  while true do s = s .. s end
end
