-- Hostile: error() with a table
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: error object is a table value
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  error({code = 42})
end
