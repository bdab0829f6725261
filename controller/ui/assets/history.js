// Series for the time charts from GET /v1/history ({"samples": [{atSeconds, clusters,
// queue, spend}], "latestSeconds"}, oldest first, controller time). A name missing from a
// sample counts as 0 for queue depth (nothing waiting) and as a gap elsewhere (not observed).

const DAY_SECONDS = 24 * 3600;

// The samples seen so far, one per signed-in session, shared by the pages that chart them.
// The first poll fetches the day; later ones only what is newer (?since=), so a poll's size
// does not grow with the fleet's history. A controller whose newest sample is older than
// ours started over (a new state folder): the cache is refetched.
export class HistoryCache {
  constructor() {
    this.samples = [];
  }

  // {"samples"} as /v1/history would answer in full, or null when the controller serves
  // no /v1/history.
  async update(api) {
    const last = this.samples.length ? this.samples[this.samples.length - 1].atSeconds : null;
    const body = await api.optional(last === null ? '/v1/history' : `/v1/history?since=${last}`);
    if (body === null) return null;
    const latest = Number(body.latestSeconds);
    if (last !== null && Number.isFinite(latest) && latest < last) {
      this.samples = [];
      return this.update(api);
    }
    const fresh = samplesOf(body).filter(s => last === null || s.atSeconds > last);
    this.samples = this.samples.concat(fresh);
    const newest = this.samples.length ? this.samples[this.samples.length - 1].atSeconds : 0;
    this.samples = this.samples.filter(s => s.atSeconds >= newest - DAY_SECONDS);
    return { samples: this.samples };
  }
}

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
