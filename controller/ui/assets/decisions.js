// The decisions page: the newest placement decisions (GET /v1/decisions; a tenant token
// gets its own tenant's), filtered as the user types, and for a clicked decision its
// per-cluster verdicts and score breakdown with the workload's explanation
// (GET /v1/tenants/{t}/workloads/{name}/explain).
import { el, replaceChildren, table } from './dom.js';
import { ApiError, explainPath } from './api.js';
import * as fmt from './format.js';

function clusterOf(d) {
  return d.cluster || (d.binding && d.binding.cluster) || (d.target && d.target.cluster) || '';
}

// The rule that decided, when the record names one (a rejection or a queueing rule). A
// placed decision has none: its other clusters' rejections are in the detail.
function ruleOf(d) {
  if (d.rule) return d.rule;
  if (d.outcome === 'placed') return '';
  const rules = (Array.isArray(d.verdicts) ? d.verdicts : []).filter(v => !v.eligible && v.rule).map(v => v.rule);
  return [...new Set(rules)].join(', ');
}

function keyOf(d) {
  return d.seq !== undefined ? `seq:${d.seq}` : `${d.tenant}/${d.workload}/${d.decidedAtMillis ?? d.at_ms ?? d.time ?? ''}/${d.attempt ?? ''}/${d.outcome ?? ''}`;
}

function searchText(d) {
  return [d.workload, d.tenant, d.outcome, clusterOf(d), d.reason, ruleOf(d), d.kind].filter(Boolean).join(' ').toLowerCase();
}

function outcome(d) {
  const o = String(d.outcome || d.kind || '?');
  const cls = o === 'placed' ? 'ok' : o === 'rejected' ? 'bad' : 'warn';
  return el('span', { class: `pill ${cls}` }, o);
}

function breakdown(score) {
  if (!score || typeof score !== 'object') return '—';
  const parts = Object.entries(score).filter(([k]) => k !== 'total')
    .map(([k, v]) => el('span', { class: 'score-part', testid: 'score-part' }, `${k} ${typeof v === 'number' ? v.toFixed(2) : String(v)}`));
  return el('div', { class: 'score' },
    el('strong', { testid: 'score-total' }, typeof score.total === 'number' ? score.total.toFixed(2) : String(score.total ?? '—')),
    parts.length ? el('div', { class: 'score-parts' }, parts) : null);
}

// Decision objects say fitsNow; rows a store kept before them, fits_now.
function fitsNow(v) {
  return v.fitsNow ?? v.fits_now;
}

function verdictTable(verdicts, chosen) {
  const t = table('verdict-table', ['Cluster', 'Verdict', 'Score and breakdown, or the rule that rejected it', 'Est. cost', 'Fits now']);
  for (const v of verdicts) {
    const eligible = Boolean(v.eligible);
    t.body.append(el('tr', { testid: 'verdict-row', 'data-cluster': v.cluster, class: v.cluster === chosen ? 'chosen' : '' },
      el('th', { scope: 'row', class: 'name' }, v.cluster, v.cluster === chosen ? el('span', { class: 'muted' }, ' (chosen)') : null),
      el('td', {}, el('span', { class: `pill ${eligible ? 'ok' : 'bad'}` }, eligible ? 'eligible' : 'rejected')),
      eligible ? el('td', {}, breakdown(v.score))
        : el('td', { class: 'reason' }, v.rule ? el('code', {}, v.rule) : null, v.rule && v.reason ? ': ' : '', v.reason || (v.rule ? '' : '—')),
      el('td', { class: 'num' }, v.cost ? fmt.money(fmt.splitMoney(v.cost).amount, fmt.splitMoney(v.cost).currency) : '—'),
      el('td', {}, fitsNow(v) === undefined ? '—' : fitsNow(v) ? 'yes' : 'no')));
  }
  return t.element;
}

export function createDecisionsPage() {
  let records = [];
  let selected = null;  // key of the clicked decision
  const search = el('input', { type: 'search', testid: 'decision-search', placeholder: 'Search workload, tenant, outcome, cluster, rule, reason', 'aria-label': 'Search decisions' });
  const count = el('span', { class: 'muted', testid: 'decision-count' });
  const t = table('decision-table', ['Time', 'Workload', 'Tenant', 'Outcome', 'Reason']);
  const detail = el('aside', { class: 'detail', testid: 'decision-detail-panel' },
    el('p', { class: 'muted' }, 'Click a decision to see every cluster\'s verdict and score.'));
  const element = el('section', { testid: 'decisions', class: 'page' }, el('h1', {}, 'Decisions'),
    el('div', { class: 'toolbar' }, search, count),
    el('div', { class: 'split' }, el('div', { class: 'list' }, t.element), detail));
  let api = null;

  function renderRows() {
    const q = search.value.trim().toLowerCase();
    const shown = records.filter(r => !q || r.text.includes(q));
    replaceChildren(count, `${shown.length} of ${records.length}`);
    const rows = shown.map(r => {
      const d = r.record;
      const row = el('tr', {
        testid: 'decision-row', tabindex: 0, class: r.key === selected ? 'clickable selected' : 'clickable',
        'data-workload': d.workload, 'data-tenant': d.tenant, 'data-outcome': d.outcome, 'aria-selected': r.key === selected ? 'true' : 'false',
        onclick: () => open(r), onkeydown: e => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); open(r); } },
      },
      el('td', { class: 'nowrap' }, fmt.recordTime(d)),
      el('th', { scope: 'row', class: 'name' }, d.workload ?? '—'),
      el('td', {}, d.tenant ?? '—'),
      el('td', { class: 'nowrap' }, outcome(d), clusterOf(d) ? ` ${clusterOf(d)}` : ''),
      el('td', { class: 'reason' }, ruleOf(d) ? el('code', {}, ruleOf(d)) : null, ruleOf(d) ? ': ' : '', d.reason || '—'));
      return row;
    });
    if (rows.length === 0) rows.push(el('tr', {}, el('td', { colspan: 5, class: 'muted' }, records.length ? 'no decision matches' : 'no decisions yet')));
    replaceChildren(t.body, rows);
  }
  search.addEventListener('input', renderRows);

  async function open(r) {
    selected = r.key;
    renderRows();
    const d = r.record;
    replaceChildren(detail, el('p', { class: 'muted' }, `Loading ${d.workload} …`));
    let explain = null, failure = null;
    try {
      explain = await api.get(explainPath(d.tenant, d.workload));
    } catch (e) {
      failure = e instanceof ApiError ? `${e.status || ''} ${e.message}`.trim() : String(e);
    }
    if (selected !== r.key) return;  // another decision was clicked meanwhile
    const verdicts = Array.isArray(d.verdicts) && d.verdicts.length ? d.verdicts
      : (explain && explain.decision && Array.isArray(explain.decision.verdicts) ? explain.decision.verdicts : []);
    const why = explain && Array.isArray(explain.why) ? explain.why : [];
    const history = explain && Array.isArray(explain.history) ? explain.history : [];
    replaceChildren(detail, el('div', { testid: 'decision-detail' },
      el('h2', {}, d.workload ?? '?', el('span', { class: 'muted' }, ` · ${d.tenant ?? ''}`)),
      el('dl', { class: 'facts' },
        el('dt', {}, 'Decision'), el('dd', {}, outcome(d), ' ', fmt.recordTime(d), d.attempt ? ` · attempt ${d.attempt}` : ''),
        el('dt', {}, 'Reason'), el('dd', {}, d.reason || '—'),
        d.cost ? el('dt', {}, 'Estimated cost') : null, d.cost ? el('dd', {}, d.cost) : null,
        explain ? el('dt', {}, 'State now') : null,
        explain ? el('dd', { testid: 'decision-state' }, `${explain.state ?? '?'}${explain.cluster ? ` on ${explain.cluster}` : ''}${explain.reason ? ` — ${explain.reason}` : ''}`) : null),
      failure ? el('p', { class: 'inline-error', testid: 'decision-detail-error' }, `Explanation unavailable: ${failure}`) : null,
      el('h3', {}, `Verdicts per cluster (${verdicts.length})`),
      verdicts.length ? verdictTable(verdicts, d.outcome === 'placed' ? clusterOf(d) : '') : el('p', { class: 'muted' }, 'This decision records no verdicts.'),
      Array.isArray(d.verdictGroups) && d.verdictGroups.length
        ? el('p', { class: 'muted' }, `Not listed: ${d.verdictGroups.map(g => `${g.clusters ?? '?'} × ${g.rule || 'lower score'}`).join(', ')}`) : null,
      why.length ? el('h3', {}, 'Why (explain)') : null,
      why.length ? el('ul', { class: 'why', testid: 'decision-why' }, why.map(line => el('li', {}, line))) : null,
      history.length ? el('h3', {}, 'History') : null,
      history.length ? el('ol', { class: 'history small', testid: 'decision-history' },
        history.map(h => el('li', {}, `${h.at ?? ''} attempt ${h.attempt ?? '?'}: ${h.from ?? ''} → ${h.to ?? ''}${h.reason ? ` (${h.reason})` : ''}`))) : null));
  }

  async function refresh(a) {
    api = a;
    const body = await api.get('/v1/decisions');
    const items = Array.isArray(body.items) ? body.items : [];
    // Newest first, whatever order the controller sends.
    const ordered = items.map((record, i) => ({ record, i })).sort((a, b) => {
      const sa = a.record.seq, sb = b.record.seq;
      if (sa !== undefined && sb !== undefined) return Number(sb) - Number(sa);
      const ta = Number(a.record.decidedAtMillis ?? a.record.at_ms), tb = Number(b.record.decidedAtMillis ?? b.record.at_ms);
      if (Number.isFinite(ta) && Number.isFinite(tb) && ta !== tb) return tb - ta;
      return a.i - b.i;
    });
    records = ordered.map(({ record }) => ({ record, key: keyOf(record), text: searchText(record) }));
    renderRows();
  }
  return { element, refresh };
}
