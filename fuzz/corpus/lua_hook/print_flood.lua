-- Hostile: print in a loop only fills a bounded log
-- expect: ok
-- normal: yes

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  for i = 1, 1000 do print(string.rep("log", 100), i) end
  return true, "printed"
end
