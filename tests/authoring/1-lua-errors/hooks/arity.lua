-- Hooks declared with parameters they never receive.
function filter(w)
  return w.resources.gpus <= 8
end

function score(w, c, p, extra)
  return 0
end
