// The fleet page: one row per cluster (health, GPUs allocated / capacity per model, elastic
// nodes) from GET /v1/clusters, and GPU allocation over time by cluster from /v1/history.
import { el, replaceChildren, table } from './dom.js';
import { chartSvg, drawLineChart, drawNoData } from './charts.js';
import { allocationSeries, samplesOf } from './history.js';
import * as fmt from './format.js';

function health(c) {
  if (!c.observed) return el('span', { class: 'pill warn', title: c.last_error || '' }, 'not observed yet');
  if (!c.healthy) return el('span', { class: 'pill bad', title: c.last_error || '' }, 'unhealthy');
  return el('span', { class: 'pill ok' }, 'healthy');
}

// "A100-80GB 3.5 / 8" per model; without per-model figures, whole GPUs of every model.
function allocation(c) {
  if (Array.isArray(c.models) && c.models.length > 0) {
    return c.models.map(m => {
      const cap = Number(m.capacity) || 0;
      const used = Number(m.allocated) || 0;
      return el('div', { class: 'model', testid: 'cluster-model' },
        el('span', { class: 'model-name' }, m.model ?? '?'), ' ',
        el('span', { class: 'num' }, `${fmt.gpus(used)} / ${fmt.gpus(cap)}`),
        el('meter', { min: 0, max: cap || 1, value: used, title: fmt.percent(cap ? used / cap : 0) }));
    });
  }
  const total = Number(c.gpus) || 0;
  return el('span', { class: 'num' }, `${fmt.gpus(total - (Number(c.gpus_free) || 0))} / ${fmt.gpus(total)}`);
}

function elastic(c) {
  if (!c.elastic) return el('span', { class: 'muted' }, 'fixed');
  return `${c.elastic.nodes ?? '?'} of max ${c.elastic.maxNodes ?? '?'}`;
}

function location(c) {
  return [c.provider, c.region, c.zone].filter(Boolean).join(' · ') || '—';
}

export function createFleetPage({ history: cache }) {
  const summary = el('div', { class: 'tiles', testid: 'fleet-summary' });
  const t = table('cluster-table', ['Cluster', 'Health', 'Where', 'GPUs allocated / capacity', 'Nodes', 'Elastic nodes', 'Running', 'Errors']);
  const chart = el('div', { class: 'chart' });
  const svgChart = chartSvg('gpu-allocation');
  chart.append(el('h2', {}, 'GPUs allocated over time, by cluster'), svgChart);
  const element = el('section', { testid: 'fleet', class: 'page' }, el('h1', {}, 'Fleet'), summary, t.element, chart);

  async function refresh(api) {
    const [clusters, history] = await Promise.all([api.get('/v1/clusters'), cache.update(api)]);
    const items = Array.isArray(clusters.items) ? clusters.items : [];
    let allocated = 0, capacity = 0, healthy = 0;
    const rows = items.map(c => {
      if (c.healthy && c.observed) ++healthy;
      if (Array.isArray(c.models)) {
        for (const m of c.models) {
          allocated += Number(m.allocated) || 0;
          capacity += Number(m.capacity) || 0;
        }
      } else {
        capacity += Number(c.gpus) || 0;
        allocated += (Number(c.gpus) || 0) - (Number(c.gpus_free) || 0);
      }
      return el('tr', { testid: 'cluster-row', 'data-cluster': c.name, class: c.healthy ? '' : 'row-bad' },
        el('th', { scope: 'row', class: 'name' }, c.name),
        el('td', {}, health(c), c.last_error ? el('div', { class: 'muted small' }, c.last_error) : null),
        el('td', {}, location(c)),
        el('td', { testid: 'cluster-gpus' }, allocation(c)),
        el('td', { class: 'num' }, c.nodes ?? '—'),
        el('td', { testid: 'cluster-elastic' }, elastic(c)),
        el('td', { class: 'num' }, c.running ?? '—'),
        el('td', { class: 'num' }, c.errors ?? 0));
    });
    if (rows.length === 0) rows.push(el('tr', {}, el('td', { colspan: 8, class: 'muted' }, 'no clusters')));
    replaceChildren(t.body, rows);
    replaceChildren(summary,
      el('div', { class: 'tile' }, el('span', { class: 'tile-value' }, `${healthy} / ${items.length}`), el('span', {}, 'clusters healthy')),
      el('div', { class: 'tile' }, el('span', { class: 'tile-value' }, `${fmt.gpus(allocated)} / ${fmt.gpus(capacity)}`), el('span', {}, 'GPUs allocated')),
      el('div', { class: 'tile' }, el('span', { class: 'tile-value' }, fmt.percent(capacity ? allocated / capacity : 0)), el('span', {}, 'utilisation')));
    const title = 'GPUs allocated over time, by cluster';
    if (history === null) drawNoData(svgChart, title, 'no data yet (this controller serves no /v1/history)');
    else {
      drawLineChart(svgChart, {
        title, series: allocationSeries(samplesOf(history)),
        xTitle: 'controller time (UTC)', yTitle: 'GPUs allocated', xFormat: fmt.clockShort,
      });
    }
  }
  return { element, refresh };
}
