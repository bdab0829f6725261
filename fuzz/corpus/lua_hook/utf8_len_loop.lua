-- Hostile: utf8.len over a big string, many times
-- expect: hook-error
-- expect-kind: budget
-- normal: yes
-- expect-line: 11

local big = string.rep("\u{20AC}", 1 << 18)
function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local n = 0
  for i = 1, 1e6 do n = n + utf8.len(big) end
  return true
end
