-- Hostile: stopping the collector
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: global 'collectgarbage'
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  collectgarbage("stop")
  return true
end
