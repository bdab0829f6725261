// Number, money, time and duration formatting for tables and chart axes.

const grouped = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

// "19652.5444" (an exact decimal string from the API) -> "19,652.54 EUR". Money fields are
// strings so the API loses no cent; only the display rounds to minor units.
export function money(amount, currency) {
  if (amount === undefined || amount === null || amount === '') return '—';
  const n = Number(amount);
  if (!Number.isFinite(n)) return String(amount);
  return currency ? `${grouped.format(n)} ${currency}` : grouped.format(n);
}

// Amount strings sometimes carry their currency ("0.4494 EUR"): split them.
export function splitMoney(text) {
  const m = /^\s*(-?[0-9.]+)\s*([A-Z]{3})?\s*$/.exec(String(text ?? ''));
  return m ? { amount: m[1], currency: m[2] || '' } : { amount: String(text ?? ''), currency: '' };
}

// GPUs may be fractional (MIG slices, shared GPUs): one decimal unless whole.
export function gpus(n) {
  const v = Number(n);
  if (!Number.isFinite(v)) return '—';
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

export function percent(ratio) {
  if (ratio === undefined || ratio === null || !Number.isFinite(Number(ratio))) return '—';
  return `${(Number(ratio) * 100).toFixed(Number(ratio) < 0.1 ? 1 : 0)} %`;
}

// 4000 -> "1h 6m"; 42 -> "42s".
export function duration(seconds) {
  const s = Number(seconds);
  if (!Number.isFinite(s) || s < 0) return '—';
  if (s < 60) return `${Math.round(s)}s`;
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  return `${m}m ${Math.round(s % 60)}s`;
}

// A bucket bound: 30 -> "30s", 600 -> "10m", 7200 -> "2h", 86400 -> "1d".
export function durationShort(seconds) {
  const s = Number(seconds);
  if (!Number.isFinite(s)) return '?';
  if (s < 60) return `${Number(s.toFixed(1))}s`;
  if (s < 3600) return `${Number((s / 60).toFixed(1))}m`;
  if (s < 86400) return `${Number((s / 3600).toFixed(1))}h`;
  return `${Number((s / 86400).toFixed(1))}d`;
}

// RFC 3339 from the API -> "2026-11-23 14:05:07" (UTC, as the controller wrote it).
export function timestamp(text) {
  if (!text) return '—';
  return String(text).replace('T', ' ').replace(/(\.\d+)?Z$/, '');
}

// The controller's clock reads seconds since the Unix epoch on the wall clock and since
// the run's start in a simulated federation; below this it is a simulated run's time
// (common/time_text.h: kVirtualClockLimitMillis).
const VIRTUAL_LIMIT_SECONDS = 1e9;

// A simulated run's time in seconds -> "+26:15:00" (hours past 24, as `gpufed run` prints).
export function sinceStart(seconds) {
  const s = Math.max(0, Math.floor(Number(seconds)));
  const pad = (n) => String(n).padStart(2, '0');
  return `+${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`;
}

// Controller time in seconds -> "2026-11-23 14:05" (UTC), or "+26:15:00" in a simulated run.
export function clock(seconds) {
  const t = Number(seconds);
  if (!Number.isFinite(t)) return '—';
  if (t < VIRTUAL_LIMIT_SECONDS) return sinceStart(t);
  return new Date(t * 1000).toISOString().slice(0, 16).replace('T', ' ');
}

// Axis label for controller time: "14:05", or "2d 14:05" once the span passes a day; a
// simulated run's "+14:05" (hours and minutes since its start).
export function clockShort(seconds, withDay) {
  if (Number(seconds) < VIRTUAL_LIMIT_SECONDS) return sinceStart(seconds).slice(0, -3);
  const iso = new Date(Number(seconds) * 1000).toISOString();
  const hm = iso.slice(11, 16);
  if (!withDay) return hm;
  return `${Math.floor(Number(seconds) / 86400)}d ${hm}`;
}

// A decision record's time: its "time" (RFC 3339) when present, else its decidedAtMillis
// (at_ms in rows a store kept before the decision object).
export function recordTime(record) {
  if (record.time) return timestamp(record.time);
  const millis = record.decidedAtMillis ?? record.at_ms;
  if (millis !== undefined) return clock(Number(millis) / 1000);
  return '—';
}
