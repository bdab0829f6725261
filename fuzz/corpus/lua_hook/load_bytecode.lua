-- Hostile: a hand-made binary chunk (no string.dump needed)
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: global 'load'
-- normal: yes
-- expect-line: 11

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local chunk = "\27Lua\84\0\25\147\13\10\26\10\4\8\8\120\86" .. string.rep("\0", 64)
  local f = load(chunk, "x", "b")
  return f()
end
