-- Hostile: error() with nil
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: error object is nil
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  error(nil)
end
