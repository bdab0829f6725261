-- Hostile: running other files
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: attempt to call a nil value
-- normal: yes
-- expect-line: 11

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local f = dofile or loadfile or _G.dofile or rawget(_G, "loadfile")
  return f("/etc/passwd")
end
