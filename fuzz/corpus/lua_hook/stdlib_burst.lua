-- Which work may burst to the cloud at all (when it bursts is the placer's business).

function filter(w, c, p)
  if c.onprem then return true end
  for _, t in ipairs(p.neverBurst) do
    if t == w.type then return false, w.type .. " work never bursts to the cloud" end
  end
  local hours = w.durationHint / 3600
  if p.cloudNeedsCheckpoint and not w.checkpoint.enabled and hours > p.maxUncheckpointedHours then
    return false, string.format("%.0fh without checkpoints may not burst (limit %gh)", hours, p.maxUncheckpointedHours)
  end
  return true
end
