// Small SVG charts: time-series lines and bar charts, with axes, axis titles and a legend.
// Each draw function empties an <svg data-chart="NAME"> and redraws it from plain numbers;
// without data it writes an explicit "no data yet" (and sets data-empty) instead of an
// empty frame, so a reader can tell "nothing happened" from "nothing drawn".
import { svg, clear } from './dom.js';

const W = 640;
const H = 260;
const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
const MAX_POINTS = 600;  // per series: enough for a 640-unit-wide plot

// A stable colour per name, so a cluster keeps its colour across redraws and pages.
export function colorOf(name, names) {
  const i = names.indexOf(name);
  return PALETTE[(i < 0 ? 0 : i) % PALETTE.length];
}

function reset(el, title) {
  clear(el);
  el.setAttribute('viewBox', `0 0 ${W} ${H}`);
  el.setAttribute('role', 'img');
  el.setAttribute('aria-label', title);
  el.removeAttribute('data-empty');
  el.append(svg('title', { text: title }));
}

export function drawNoData(el, title, message) {
  reset(el, title);
  el.setAttribute('data-empty', 'true');
  el.append(svg('rect', { x: 0.5, y: 0.5, width: W - 1, height: H - 1, class: 'frame' }));
  el.append(svg('text', { x: W / 2, y: H / 2, class: 'no-data', 'text-anchor': 'middle', text: message || 'no data yet' }));
}

// 0 and a round step (1, 2 or 5 times a power of ten) up to at least max.
function niceTicks(max, count) {
  const top = max > 0 ? max : 1;
  const raw = top / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map(f => f * power).find(s => s >= raw);
  const ticks = [];
  for (let v = 0; v <= top + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  if (ticks[ticks.length - 1] < top) ticks.push(Number((ticks[ticks.length - 1] + step).toPrecision(12)));
  return ticks;
}

function tickLabel(v) {
  if (Math.abs(v) >= 10000) return `${(v / 1000).toFixed(0)}k`;
  return Number.isInteger(v) ? String(v) : String(Number(v.toFixed(2)));
}

// The legend across the top; returns its height.
function legend(el, items) {
  let x = 8, y = 14;
  for (const item of items) {
    const w = 22 + item.name.length * 6.6;
    if (x + w > W - 8 && x > 8) {
      x = 8;
      y += 16;
    }
    const g = svg('g', { class: 'legend-item' });
    if (item.kind === 'line') g.append(svg('line', { x1: x, y1: y - 4, x2: x + 14, y2: y - 4, stroke: item.color, 'stroke-width': 2, 'stroke-dasharray': item.dash }));
    else g.append(svg('rect', { x, y: y - 10, width: 12, height: 10, fill: item.color }));
    g.append(svg('text', { x: x + 18, y, class: 'legend', text: item.name }));
    el.append(g);
    x += w;
  }
  return y + 8;
}

// Frame, gridlines, ticks and titles. yTicks are values; xTicks are {pos, label} in pixels.
function axes(el, box, yTicks, yScale, xTicks, xTitle, yTitle) {
  const g = svg('g', { class: 'axes' });
  for (const v of yTicks) {
    const y = yScale(v);
    g.append(svg('line', { x1: box.left, x2: box.right, y1: y, y2: y, class: 'grid' }));
    g.append(svg('text', { x: box.left - 6, y: y + 4, 'text-anchor': 'end', class: 'tick', text: tickLabel(v) }));
  }
  for (const t of xTicks) {
    g.append(svg('line', { x1: t.pos, x2: t.pos, y1: box.bottom, y2: box.bottom + 4, class: 'axis' }));
    g.append(svg('text', { x: t.pos, y: box.bottom + 16, 'text-anchor': 'middle', class: 'tick', text: t.label }));
  }
  g.append(svg('line', { x1: box.left, x2: box.right, y1: box.bottom, y2: box.bottom, class: 'axis x-axis' }));
  g.append(svg('line', { x1: box.left, x2: box.left, y1: box.top, y2: box.bottom, class: 'axis y-axis' }));
  g.append(svg('text', { x: (box.left + box.right) / 2, y: H - 4, 'text-anchor': 'middle', class: 'axis-title', text: xTitle }));
  const yMid = (box.top + box.bottom) / 2;
  g.append(svg('text', { x: 12, y: yMid, 'text-anchor': 'middle', class: 'axis-title', transform: `rotate(-90 12 ${yMid})`, text: yTitle }));
  el.append(g);
}

// Keeps at most MAX_POINTS, always the last (the value now).
function thin(points) {
  if (points.length <= MAX_POINTS) return points;
  const stride = points.length / MAX_POINTS;
  const out = [];
  for (let i = 0; i < MAX_POINTS - 1; ++i) out.push(points[Math.floor(i * stride)]);
  out.push(points[points.length - 1]);
  return out;
}

// series: [{name, points: [[x, y], ...], dash?}], x ascending. xFormat(x, spansDays) labels ticks.
export function drawLineChart(el, { title, series, xTitle, yTitle, xFormat, empty }) {
  const drawn = series.filter(s => s.points.length > 0);
  if (drawn.length === 0) return drawNoData(el, title, empty);
  reset(el, title);
  const names = series.map(s => s.name);
  const top = legend(el, series.map(s => ({ name: s.name, color: s.color || colorOf(s.name, names), kind: 'line', dash: s.dash })));
  const box = { left: 52, right: W - 14, top: top + 6, bottom: H - 40 };
  let x0 = Infinity, x1 = -Infinity, yMax = 0;
  for (const s of drawn) {
    for (const [x, y] of s.points) {
      x0 = Math.min(x0, x);
      x1 = Math.max(x1, x);
      yMax = Math.max(yMax, y);
    }
  }
  if (x1 - x0 < 1) {  // one sample: centre it
    x0 -= 30;
    x1 += 30;
  }
  const yTicks = niceTicks(yMax, 4);
  const yTop = yTicks[yTicks.length - 1];
  const xs = x => box.left + ((x - x0) / (x1 - x0)) * (box.right - box.left);
  const ys = y => box.bottom - (y / yTop) * (box.bottom - box.top);
  const spansDays = x1 - x0 > 86400;
  const xTicks = [];
  for (let i = 0; i <= 4; ++i) {
    const x = x0 + ((x1 - x0) * i) / 4;
    xTicks.push({ pos: xs(x), label: xFormat ? xFormat(x, spansDays) : tickLabel(x) });
  }
  axes(el, box, yTicks, ys, xTicks, xTitle, yTitle);
  for (const s of drawn) {
    const color = s.color || colorOf(s.name, names);
    const pts = thin(s.points);
    const d = pts.map(([x, y], i) => `${i === 0 ? 'M' : 'L'}${xs(x).toFixed(1)} ${ys(y).toFixed(1)}`).join(' ');
    const path = svg('path', { d, class: 'series', stroke: color, 'stroke-dasharray': s.dash, 'data-series': s.name });
    path.append(svg('title', { text: s.name }));
    el.append(path);
    // The latest value as a dot: a single sample still shows.
    const [lx, ly] = pts[pts.length - 1];
    el.append(svg('circle', { cx: xs(lx).toFixed(1), cy: ys(ly).toFixed(1), r: 3, fill: color, class: 'last-point' }));
  }
}

// categories: labels along x; bars: [{label, value, color}] one per category;
// markers (optional): [{value}] per category, drawn as a line across the bar (a budget).
// legendItems: [{name, color, kind}].
export function drawBarChart(el, { title, categories, bars, markers, legendItems, xTitle, yTitle, empty }) {
  if (categories.length === 0 || (bars.every(b => !(b.value > 0)) && !(markers || []).some(m => m && m.value > 0))) {
    return drawNoData(el, title, empty);
  }
  reset(el, title);
  const top = legend(el, legendItems);
  const box = { left: 52, right: W - 14, top: top + 6, bottom: H - 40 };
  let yMax = 0;
  for (const b of bars) yMax = Math.max(yMax, b.value || 0);
  for (const m of markers || []) yMax = Math.max(yMax, (m && m.value) || 0);
  const yTicks = niceTicks(yMax, 4);
  const yTop = yTicks[yTicks.length - 1];
  const ys = y => box.bottom - (y / yTop) * (box.bottom - box.top);
  const slot = (box.right - box.left) / categories.length;
  const barWidth = Math.max(2, Math.min(60, slot * 0.6));
  const xTicks = categories.map((c, i) => ({ pos: box.left + slot * (i + 0.5), label: c }));
  axes(el, box, yTicks, ys, xTicks, xTitle, yTitle);
  bars.forEach((b, i) => {
    const value = b.value || 0;
    const x = box.left + slot * (i + 0.5) - barWidth / 2;
    const rect = svg('rect', { x: x.toFixed(1), y: ys(value).toFixed(1), width: barWidth.toFixed(1), height: Math.max(0, box.bottom - ys(value)).toFixed(1), fill: b.color, class: 'bar', 'data-value': value });
    rect.append(svg('title', { text: `${categories[i]}: ${b.label ?? value}` }));
    el.append(rect);
  });
  (markers || []).forEach((m, i) => {
    if (!m || !(m.value > 0)) return;
    const x = box.left + slot * (i + 0.5) - barWidth / 2 - 6;
    const line = svg('line', { x1: x, x2: x + barWidth + 12, y1: ys(m.value), y2: ys(m.value), class: 'marker' });
    line.append(svg('title', { text: `${categories[i]}: ${m.label ?? m.value}` }));
    el.append(line);
  });
}

// An empty chart element; the draw functions fill it.
export function chartSvg(name) {
  return svg('svg', { 'data-chart': name, class: 'chart-svg', viewBox: `0 0 ${W} ${H}` });
}
