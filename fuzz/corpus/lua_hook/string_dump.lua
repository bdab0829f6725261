-- Hostile: string.dump would produce bytecode
-- expect: hook-error
-- expect-kind: runtime
-- expect-message: field 'dump'
-- normal: yes
-- expect-line: 10

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  return true, string.dump(admit)
end
