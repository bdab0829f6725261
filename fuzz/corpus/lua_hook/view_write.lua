-- Hostile: writing a nested view field
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: read-only view
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  w.resources.gpus = 0
  return true
end
