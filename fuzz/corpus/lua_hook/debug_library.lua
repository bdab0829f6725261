-- Hostile: debug.getregistry / sethook
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: global 'debug'
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  debug.sethook()
  return true
end
