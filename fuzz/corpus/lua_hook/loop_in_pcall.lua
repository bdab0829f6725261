-- Hostile: pcall must not swallow the budget error
-- expect: hook-error
-- expect-kind: budget
-- expect-message: instruction budget
-- normal: yes
-- expect-line: 11

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  while true do
    pcall(function() while true do end end)
  end
end
