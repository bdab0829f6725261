-- Hostile: a message handler that loops forever
-- expect: hook-error
-- expect-kind: budget
-- normal: yes
-- expect-line: 9

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  xpcall(error, function() while true do end end)
  return true
end
