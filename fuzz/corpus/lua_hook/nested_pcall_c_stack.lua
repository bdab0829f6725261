-- Hostile: pcall nesting that exhausts the C stack
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: inner
-- normal: yes
-- expect-line: 12

local function nest(n) return pcall(nest, n + 1) end
function admit(w)
  if w.mode == "normal" then return true, "normal" end
  local s = string.rep("x", 10)
  s = s:gsub("x", function() return s:gsub("x", function() error("inner") end) end)
  return true
end
