// The queue page: waiting workloads in placement order (GET /v1/queue), queue depth over
// time by tenant (/v1/history) and the wait-time histogram (/v1/queue's waitHistogram).
import { el, replaceChildren, table } from './dom.js';
import { chartSvg, drawBarChart, drawLineChart, drawNoData } from './charts.js';
import { queueSeries, samplesOf } from './history.js';
import * as fmt from './format.js';

// Bucket labels from upper bounds in seconds: "≤1m", ..., ">1d" for the +Inf bucket.
function bucketLabels(bounds) {
  const labels = bounds.map(b => `≤${fmt.durationShort(b)}`);
  labels.push(bounds.length ? `>${fmt.durationShort(bounds[bounds.length - 1])}` : 'all');
  return labels;
}

export function createQueuePage({ history: cache }) {
  const summary = el('p', { class: 'summary', testid: 'queue-summary' });
  const t = table('queue-table', ['#', 'Workload', 'Tenant', 'Priority', 'Waited', 'Reason', 'Submitted']);
  const depth = chartSvg('queue-depth');
  const wait = chartSvg('wait');
  const element = el('section', { testid: 'queue', class: 'page' }, el('h1', {}, 'Queue'), summary, t.element,
    el('div', { class: 'chart-row' },
      el('div', { class: 'chart' }, el('h2', {}, 'Queue depth over time, by tenant'), depth),
      el('div', { class: 'chart' }, el('h2', {}, 'Time waited before placement'), wait)));

  async function refresh(api) {
    const [queue, history] = await Promise.all([api.optional('/v1/queue'), cache.update(api)]);
    if (queue === null) {
      replaceChildren(summary, 'This controller serves no /v1/queue.');
      replaceChildren(t.body);
      drawNoData(wait, 'Wait-time histogram', 'no data yet (this controller serves no /v1/queue)');
    } else {
      const items = (Array.isArray(queue.items) ? queue.items : [])
        .slice().sort((a, b) => (Number(a.position) || 0) - (Number(b.position) || 0));
      const oldest = items.reduce((m, w) => Math.max(m, Number(w.waitedSeconds) || 0), 0);
      replaceChildren(summary, items.length === 0 ? 'Nothing is waiting.'
        : `${items.length} waiting; the longest has waited ${fmt.duration(oldest)}.`);
      const rows = items.map(w => el('tr', { testid: 'queue-row', 'data-workload': w.name, 'data-tenant': w.tenant },
        el('td', { class: 'num', testid: 'queue-position' }, w.position ?? '—'),
        el('th', { scope: 'row', class: 'name' }, w.name),
        el('td', {}, w.tenant),
        el('td', { class: 'num' }, w.priority ?? '—'),
        el('td', { class: 'num', title: `${w.waitedSeconds ?? '?'} s` }, fmt.duration(w.waitedSeconds)),
        el('td', { class: 'reason' }, w.reason || '—'),
        el('td', { class: 'nowrap' }, fmt.timestamp(w.submitted))));
      if (rows.length === 0) rows.push(el('tr', {}, el('td', { colspan: 7, class: 'muted' }, 'The queue is empty.')));
      replaceChildren(t.body, rows);
      const h = queue.waitHistogram;
      const title = 'Wait-time histogram';
      if (!h || !Array.isArray(h.bounds) || !Array.isArray(h.counts) || !(Number(h.count) > 0)) {
        drawNoData(wait, title, 'no data yet');
      } else {
        const labels = bucketLabels(h.bounds.map(Number));
        drawBarChart(wait, {
          title, categories: labels,
          bars: labels.map((_, i) => ({ value: Number(h.counts[i]) || 0, color: '#1f77b4' })),
          legendItems: [{ name: `workloads by time waited (${h.count} in all, mean ${fmt.duration(Number(h.sum) / Number(h.count))})`, color: '#1f77b4' }],
          xTitle: 'waited up to', yTitle: 'workloads',
        });
      }
    }
    const title = 'Queue depth over time, by tenant';
    if (history === null) drawNoData(depth, title, 'no data yet (this controller serves no /v1/history)');
    else {
      drawLineChart(depth, {
        title, series: queueSeries(samplesOf(history)),
        xTitle: 'controller time (UTC)', yTitle: 'workloads waiting', xFormat: fmt.clockShort,
      });
    }
  }
  return { element, refresh };
}
