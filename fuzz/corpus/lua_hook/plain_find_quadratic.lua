-- Hostile: plain find of a long needle in a long haystack
-- expect: hook-error
-- expect-kind: budget
-- normal: yes
-- expect-line: 11

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local hay = string.rep("a", 1 << 20)
  local needle = string.rep("a", 1 << 19) .. "b"
  return hay:find(needle, 1, true) ~= nil
end
