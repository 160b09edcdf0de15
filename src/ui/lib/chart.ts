/**
 * Charts: uPlot's one home in the UI. A histogram of events over time (bars; drag across it to
 * zoom the search to that range), line charts for timecharts, and bar charts for grouped results.
 * Each chart follows its container's width.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Chart {
  destroy(): void;
}

const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#65a30d', '#ea580c', '#4f46e5'];

function follow(el: HTMLElement, plot: uPlot, height: number): Chart {
  const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 100), height }));
  ro.observe(el);
  return {
    destroy() {
      ro.disconnect();
      plot.destroy();
    },
  };
}

/** Bars of `counts` per bucket start (ms); dragging selects a range and calls `onZoom` with it (ms). */
export function histogram(el: HTMLElement, opts: { starts: number[]; counts: number[]; spanMs: number; height?: number; tzOffsetMinutes: number; onZoom: (fromMs: number, toMs: number) => void }): Chart {
  const height = opts.height ?? 110;
  const xs = opts.starts.map((s) => s / 1000);
  const plot = new uPlot(
    {
      width: Math.max(el.clientWidth, 100),
      height,
      legend: { show: false },
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC'),
      cursor: { drag: { x: true, y: false, setScale: false }, points: { show: false } },
      scales: { x: { time: true, range: (_u, min, max) => [min, max + opts.spanMs / 1000] }, y: { range: fromZero } },
      axes: [
        { stroke: '#6b7280', grid: { show: false }, values: (_u, splits) => splits.map((v) => axisTime(v * 1000 + opts.tzOffsetMinutes * 60_000, opts.spanMs)) },
        { stroke: '#6b7280', size: 48, grid: { stroke: '#eef0f3' }, values: (_u, splits) => splits.map((v) => compact(v)) },
      ],
      series: [{}, { label: 'events', fill: 'rgba(37, 99, 235, 0.55)', stroke: '#2563eb', width: 0, paths: uPlot.paths.bars!({ size: [0.92, 60], align: 1 }), points: { show: false } }],
      hooks: {
        setSelect: [
          (u) => {
            if (u.select.width < 3) return;
            const from = u.posToVal(u.select.left, 'x') * 1000;
            const to = u.posToVal(u.select.left + u.select.width, 'x') * 1000;
            u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
            opts.onZoom(Math.floor(from), Math.ceil(to));
          },
        ],
      },
    },
    [xs, opts.counts],
    el,
  );
  return follow(el, plot, height);
}

/** One line per series over the buckets of a timechart. */
export function lineChart(el: HTMLElement, opts: { starts: number[]; series: { name: string; values: (number | null)[] }[]; tzOffsetMinutes: number; spanMs: number; height?: number }): Chart {
  const height = opts.height ?? 260;
  const plot = new uPlot(
    {
      width: Math.max(el.clientWidth, 100),
      height,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC'),
      scales: { y: { range: fromZero } },
      axes: [
        { stroke: '#6b7280', values: (_u, splits) => splits.map((v) => axisTime(v * 1000 + opts.tzOffsetMinutes * 60_000, opts.spanMs)) },
        { stroke: '#6b7280', size: 56, grid: { stroke: '#eef0f3' }, values: (_u, splits) => splits.map((v) => compact(v)) },
      ],
      series: [{}, ...opts.series.map((s, i) => ({ label: s.name, stroke: PALETTE[i % PALETTE.length]!, width: 2, points: { show: false } }))],
    },
    [opts.starts.map((s) => s / 1000), ...opts.series.map((s) => s.values)],
    el,
  );
  return follow(el, plot, height);
}

/** One bar per label. */
export function barChart(el: HTMLElement, opts: { labels: string[]; values: number[]; valueName: string; height?: number }): Chart {
  const height = opts.height ?? 260;
  const xs = opts.labels.map((_, i) => i);
  const plot = new uPlot(
    {
      width: Math.max(el.clientWidth, 100),
      height,
      legend: { show: false },
      scales: { x: { time: false, range: () => [-0.5, opts.labels.length - 0.5] }, y: { range: fromZero } },
      axes: [
        { stroke: '#6b7280', grid: { show: false }, splits: () => xs, values: (_u, splits) => splits.map((v) => truncate(opts.labels[v] ?? '', 18)), rotate: opts.labels.length > 8 ? -35 : 0, size: opts.labels.length > 8 ? 80 : 40 },
        { stroke: '#6b7280', size: 56, grid: { stroke: '#eef0f3' }, values: (_u, splits) => splits.map((v) => compact(v)) },
      ],
      series: [{}, { label: opts.valueName, fill: 'rgba(37, 99, 235, 0.7)', stroke: '#2563eb', width: 0, paths: uPlot.paths.bars!({ size: [0.7, 80] }), points: { show: false } }],
    },
    [xs, opts.values],
    el,
  );
  return follow(el, plot, height);
}

/** Counts start at zero. */
const fromZero = (_u: uPlot, _min: number, max: number): [number, number] => [0, max <= 0 ? 1 : max * 1.08];

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

export function compact(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e9) return `${+(v / 1e9).toFixed(1)}G`;
  if (a >= 1e6) return `${+(v / 1e6).toFixed(1)}M`;
  if (a >= 1e3) return `${+(v / 1e3).toFixed(1)}k`;
  return String(+v.toFixed(2));
}

/** A tick label of a time already shifted to the wanted zone (read as UTC). */
function axisTime(ms: number, spanMs: number): string {
  const d = new Date(ms);
  const p = (n: number): string => String(n).padStart(2, '0');
  const hm = `${p(d.getUTCHours())}:${p(d.getUTCMinutes())}`;
  if (spanMs >= 86_400_000) return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}`;
  if (spanMs >= 3_600_000) return `${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${hm}`;
  if (spanMs < 60_000) return `${hm}:${p(d.getUTCSeconds())}`;
  return hm;
}
