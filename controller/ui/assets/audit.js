// The audit page: the journal's head, its last signed checkpoint and each AuditSink's lag
// (GET /v1/audit).
import { el, replaceChildren, table } from './dom.js';
import * as fmt from './format.js';

function shortHash(h) {
  const s = String(h ?? '');
  return s.length > 20 ? `${s.slice(0, 20)}…` : s || '—';
}

export function createAuditPage() {
  const head = el('div', { class: 'tile', testid: 'audit-head' });
  const checkpoint = el('div', { class: 'tile', testid: 'audit-checkpoint' });
  const t = table('sink-table', ['Sink', 'Connection', 'Acknowledged', 'Lag (records)', 'Lag (time)', 'State', 'Last error']);
  const element = el('section', { testid: 'audit', class: 'page' }, el('h1', {}, 'Audit journal'),
    el('div', { class: 'tiles' }, head, checkpoint), el('h2', {}, 'Sinks'), t.element);

  async function refresh(api) {
    const audit = await api.optional('/v1/audit');
    if (audit === null) {
      replaceChildren(head, el('span', { class: 'muted' }, 'This controller serves no /v1/audit.'));
      replaceChildren(checkpoint);
      replaceChildren(t.body);
      return;
    }
    const h = audit.head || {};
    replaceChildren(head, el('span', { class: 'tile-value' }, `#${h.seq ?? '—'}`),
      el('span', {}, 'journal head'), el('code', { class: 'small', title: String(h.hash ?? '') }, shortHash(h.hash)));
    const c = audit.checkpoint;
    if (!c) replaceChildren(checkpoint, el('span', { class: 'tile-value muted' }, 'none yet'), el('span', {}, 'last signed checkpoint'));
    else {
      replaceChildren(checkpoint, el('span', { class: 'tile-value' }, `#${c.seq ?? '—'}`),
        el('span', {}, 'last signed checkpoint'),
        el('span', { class: 'small' }, `${c.at ?? ''}${c.keyId ? ` · key ${c.keyId}` : ''}`));
    }
    const sinks = Array.isArray(audit.sinks) ? audit.sinks : [];
    const rows = sinks.map(s => el('tr', { testid: 'sink-row', 'data-sink': s.name, class: s.lagging ? 'row-bad' : '' },
      el('th', { scope: 'row', class: 'name' }, s.name),
      el('td', {}, s.connected === undefined ? '—' : el('span', { class: `pill ${s.connected ? 'ok' : 'bad'}` }, s.connected ? 'connected' : 'disconnected')),
      el('td', { class: 'num' }, s.acknowledged ?? '—'),
      el('td', { class: 'num' }, s.lagRecords ?? '—'),
      el('td', { class: 'num' }, s.lagSeconds === undefined || s.lagSeconds === null ? '—' : fmt.duration(s.lagSeconds)),
      el('td', {}, el('span', { class: `pill ${s.lagging ? 'bad' : 'ok'}` }, s.lagging ? 'lagging' : 'in time')),
      el('td', { class: 'reason' }, s.lastError || '—')));
    if (rows.length === 0) rows.push(el('tr', {}, el('td', { colspan: 7, class: 'muted' }, 'No AuditSinks are configured: the journal stays on this machine.')));
    replaceChildren(t.body, rows);
  }
  return { element, refresh };
}
