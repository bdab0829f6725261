-- Hostile: string.format with a huge width
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: invalid conversion
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  return true, string.format("%99999999d", 1)
end
