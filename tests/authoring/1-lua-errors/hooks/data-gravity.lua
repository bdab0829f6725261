-- Data gravity: prefer the cluster that already holds the dataset.
local BIG = 2^40

local function holds(c, dataset)
  for _, d in ipairs(c.datasets) do
    if d == dataset then return true end
  end
  return false
end

function score(w, c)
  if w.data.dataset == "" then return 0 end
  if holds(c, w.data.dataset) then
    return w.data.size > BIG and 2 or 1
end
