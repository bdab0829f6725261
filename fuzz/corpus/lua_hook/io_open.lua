-- Hostile: reaching io.open
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: global 'io'
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local f = io.open("/etc/passwd")
  return true, f:read("a")
end
