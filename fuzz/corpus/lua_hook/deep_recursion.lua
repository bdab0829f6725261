-- Hostile: unbounded recursion
-- expect: hook-error
-- expect-kind: depth
-- expect-message: call depth
-- normal: yes
-- expect-line: 8

local function dive(n) return 1 + dive(n + 1) end
function admit(w)
  if w.mode == "normal" then return true, "normal" end
  return dive(1) > 0
end
