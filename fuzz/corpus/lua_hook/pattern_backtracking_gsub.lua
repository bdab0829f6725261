-- Hostile: gsub and gmatch with catastrophic patterns
-- expect: hook-error
-- expect-kind: budget
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local s = string.rep("ab", 200)
  for m in s:gmatch("(.-)(.-)(.-)(.-)(.-)c") do end
  return true
end
