-- Hostile: an error object whose __tostring raises
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: table value
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  error(setmetatable({}, {__tostring = function() error("x") end}))
end
