-- Hostile: reaching os.execute
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: global 'os'
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  os.execute("touch /tmp/pwned")
  return true
end
