-- Hostile: replacing the string methods through getmetatable('')
-- expect: hook-error
-- expect-kind: runtime
-- normal: yes
-- expect-line: 9

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  getmetatable("").__index.upper = function() return "pwned" end
  return true
end
