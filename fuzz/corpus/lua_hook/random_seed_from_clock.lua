-- Hostile: reseeding math.random from a clock
-- expect: hook-error
-- expect-kind: runtime
-- normal: yes
-- expect-line: 9

function admit(w)
  if w.mode == "normal" then return true, "normal" end
  math.randomseed(os.time())
  return true
end
