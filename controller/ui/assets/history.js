// Series for the time charts from GET /v1/history ({"samples": [{atSeconds, clusters,
// queue, spend}]}, oldest first, controller time). A name missing from a sample counts as
// 0 for queue depth (nothing waiting) and as a gap elsewhere (not observed).

export function samplesOf(history) {
  const samples = history && Array.isArray(history.samples) ? history.samples : [];
  return samples
    .filter(s => s && Number.isFinite(Number(s.atSeconds)))
    .map(s => ({ ...s, atSeconds: Number(s.atSeconds) }))
    .sort((a, b) => a.atSeconds - b.atSeconds);
}

// One series per cluster: GPUs allocated over time.
export function allocationSeries(samples) {
  const byName = new Map();
  for (const s of samples) {
    for (const [name, c] of Object.entries(s.clusters || {})) {
      if (!byName.has(name)) byName.set(name, []);
      const v = Number(c && c.allocated);
      if (Number.isFinite(v)) byName.get(name).push([s.atSeconds, v]);
    }
  }
  return [...byName.keys()].sort().map(name => ({ name, points: byName.get(name) }));
}

// One series per tenant: workloads waiting over time.
export function queueSeries(samples) {
  const names = new Set();
  for (const s of samples) for (const t of Object.keys(s.queue || {})) names.add(t);
  return [...names].sort().map(name => ({
    name,
    points: samples.map(s => [s.atSeconds, Number((s.queue || {})[name]) || 0]),
  }));
}
