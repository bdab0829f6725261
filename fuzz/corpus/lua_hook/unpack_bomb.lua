-- Hostile: unpacking ten million values
-- expect: hook-error
-- normal: yes
-- expect-line: 8

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  return select("#", table.unpack({}, 1, 1e7)) > 0
end
