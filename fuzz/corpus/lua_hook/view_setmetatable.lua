-- Hostile: replacing the metatable of a view
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: table expected
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  setmetatable(w, nil)
  return true
end
