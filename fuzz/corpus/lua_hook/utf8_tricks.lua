-- Hostile: invalid UTF-8 and out-of-range code points in the reason
-- expect: ok
-- normal: yes

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  return false, "\xff\xfe" .. utf8.char(0x7FFFFFFF) .. "\xed\xa0\x80" .. utf8.charpattern
end
