// The tenants page: spend against budget with alert levels, GPUs in use and fair share
// (GET /v1/tenants; a tenant token gets its own tenant only), and spend per tenant against
// its budget as a bar chart.
import { el, replaceChildren, table } from './dom.js';
import { chartSvg, drawBarChart, drawNoData } from './charts.js';
import * as fmt from './format.js';

const LEVEL_COLORS = { ok: '#2ca02c', warning: '#ff7f0e', critical: '#d62728' };

function level(t) {
  const l = String(t.alertLevel || 'ok');
  const cls = l === 'critical' ? 'bad' : l === 'warning' ? 'warn' : 'ok';
  return el('span', { class: `pill ${cls}`, testid: 'tenant-alert-level' }, l);
}

function spend(spent, limit, ratio, currency) {
  const text = limit === null || limit === undefined
    ? `${fmt.money(spent, currency)} (no limit)`
    : `${fmt.money(spent, currency)} of ${fmt.money(limit, currency)}`;
  return el('div', { class: 'spend' },
    el('span', { title: `${spent ?? ''} / ${limit ?? 'no limit'}` }, text),
    ratio === null || ratio === undefined ? null
      : el('span', { class: 'muted' }, ` · ${fmt.percent(ratio)}`),
    ratio === null || ratio === undefined ? null
      : el('meter', { min: 0, max: 1, low: 0.5, high: 0.9, optimum: 0, value: Math.min(1, Number(ratio)) }));
}

// {"level":0.8,"spent":"253.59 EUR","limit":"300.00 EUR","period":"1970-01","scope":"all"}
// -> "80 % reached: 253.59 EUR of 300.00 EUR (all, 1970-01)".
function alertText(a) {
  if (typeof a !== 'object' || a === null) return String(a);
  const amount = t => { const m = fmt.splitMoney(t); return fmt.money(m.amount, m.currency); };
  const where = [a.scope, a.period].filter(Boolean).join(', ');
  return `${a.level !== undefined ? fmt.percent(a.level) : '?'} reached: ${amount(a.spent)} of ${amount(a.limit)}${where ? ` (${where})` : ''}`;
}

function share(f) {
  if (!f) return '—';
  return el('div', {},
    el('div', {}, `share ${fmt.percent(f.share)}`),
    el('div', { class: 'muted small' }, `weight ${f.weight ?? '—'} · ${fmt.gpus(f.usageGpuHours)} GPU-h used`));
}

export function createTenantsPage() {
  const t = table('tenant-table', ['Tenant', 'Spend / budget', 'Alert level', 'Cloud spend / limit', 'GPUs in use', 'Fair share', 'Alerts this period']);
  const chart = chartSvg('spend');
  const element = el('section', { testid: 'tenants', class: 'page' }, el('h1', {}, 'Tenants'), t.element,
    el('div', { class: 'chart' }, el('h2', {}, 'Spend this budget period against budget'), chart));

  async function refresh(api) {
    const tenants = await api.optional('/v1/tenants');
    const title = 'Spend per tenant against budget';
    if (tenants === null) {
      replaceChildren(t.body, el('tr', {}, el('td', { colspan: 7, class: 'muted' }, 'This controller serves no /v1/tenants.')));
      drawNoData(chart, title, 'no data yet (this controller serves no /v1/tenants)');
      return;
    }
    const items = (Array.isArray(tenants.items) ? tenants.items : []).slice().sort((a, b) => String(a.name).localeCompare(String(b.name)));
    const rows = items.map(x => el('tr', { testid: 'tenant-row', 'data-tenant': x.name, class: x.alertLevel === 'critical' ? 'row-bad' : '' },
      el('th', { scope: 'row', class: 'name' }, x.name),
      el('td', { testid: 'tenant-spend' }, spend(x.spent, x.limit, x.usedRatio, x.currency)),
      el('td', {}, level(x), Array.isArray(x.alertAt) && x.alertAt.length
        ? el('div', { class: 'muted small' }, `alerts at ${x.alertAt.map(fmt.percent).join(', ')}`) : null),
      el('td', {}, x.cloudLimit === undefined && x.cloudSpent === undefined ? '—' : spend(x.cloudSpent, x.cloudLimit, x.cloudUsedRatio, x.currency)),
      el('td', { class: 'num', testid: 'tenant-gpus' }, fmt.gpus(x.gpusInUse)),
      el('td', {}, share(x.fairShare)),
      el('td', { class: 'small' }, Array.isArray(x.alerts) && x.alerts.length
        ? x.alerts.map(a => el('div', { testid: 'tenant-alert' }, alertText(a))) : el('span', { class: 'muted' }, 'none'))));
    if (rows.length === 0) rows.push(el('tr', {}, el('td', { colspan: 7, class: 'muted' }, 'no tenants')));
    replaceChildren(t.body, rows);
    // As a share of each tenant's own budget: budgets differ by orders of magnitude (300 EUR
    // next to 20,000 EUR), so absolute bars would hide the tenant closest to its limit.
    const levels = [...new Set(items.map(x => String(x.alertLevel || 'ok')))];
    const limited = items.filter(x => x.limit !== null && x.limit !== undefined && Number(x.limit) > 0);
    if (limited.length === 0 && items.length > 0) {
      // No budget to compare with: the spend itself, so the chart still says who spends.
      const currency = items.find(x => x.currency)?.currency || '';
      drawBarChart(chart, {
        title,
        categories: items.map(x => x.name),
        bars: items.map(x => ({
          value: Number(x.spent) || 0,
          label: `${fmt.money(x.spent, x.currency)} (no budget limit)`,
          color: LEVEL_COLORS.ok,
        })),
        markers: [],
        legendItems: [{ name: 'spent (no budget limit)', color: LEVEL_COLORS.ok }],
        xTitle: 'tenant',
        yTitle: currency ? `spend this period, ${currency}` : 'spend this period',
        empty: 'no data yet',
      });
      return;
    }
    drawBarChart(chart, {
      title,
      categories: limited.map(x => x.name),
      bars: limited.map(x => ({
        value: (Number(x.spent) || 0) / Number(x.limit) * 100,
        label: `${fmt.money(x.spent, x.currency)} of ${fmt.money(x.limit, x.currency)} (${fmt.percent((Number(x.spent) || 0) / Number(x.limit))})`,
        color: LEVEL_COLORS[x.alertLevel] || LEVEL_COLORS.ok,
      })),
      markers: limited.map(x => ({ value: 100, label: `budget ${fmt.money(x.limit, x.currency)}` })),
      legendItems: [
        ...['ok', 'warning', 'critical'].filter(l => levels.includes(l)).map(l => ({ name: `spent (${l})`, color: LEVEL_COLORS[l] })),
        { name: 'budget (100 %)', color: '#333', kind: 'line', dash: '4 2' },
      ],
      xTitle: 'tenant',
      yTitle: 'spend, % of budget',
      empty: items.length ? 'no tenant has a budget limit' : 'no data yet',
    });
  }
  return { element, refresh };
}
