/**
 * Benchmark reports that draw: SVG line charts (time series) and grouped bar charts, put together
 * in one self-contained HTML file (no script, no outside resource), and the one-line progress the
 * runs print while they go. Plain SVG text: nothing to install, opens in any browser.
 */

const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777'];
const W = 720;
const H = 240;
const M = { left: 64, right: 16, top: 28, bottom: 36 };

/** @param {string} s */
export const escapeXml = (s) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** @param {number} v */
function tick(v) {
  const a = Math.abs(v);
  if (a >= 1e9) return `${+(v / 1e9).toFixed(1)}G`;
  if (a >= 1e6) return `${+(v / 1e6).toFixed(1)}M`;
  if (a >= 1e3) return `${+(v / 1e3).toFixed(1)}k`;
  return String(+v.toFixed(2));
}

/** About five round steps from 0 to max. @param {number} max */
function niceTicks(max) {
  if (!(max > 0)) return [0, 1];
  const raw = max / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out = [];
  for (let v = 0; v <= max + step * 0.001; v += step) out.push(v);
  if (out[out.length - 1] < max) out.push(out[out.length - 1] + step);
  return out;
}

/**
 * A line chart of series over a shared x (seconds).
 * @param {{ title: string, xLabel?: string, yLabel: string, x: number[], series: { name: string, values: (number | null)[] }[], marks?: { y: number, label: string }[] }} c
 */
export function lineChart(c) {
  const ys = c.series.flatMap((s) => s.values.filter((v) => v !== null && Number.isFinite(v)));
  const yTicks = niceTicks(Math.max(0, ...ys, ...(c.marks ?? []).map((m) => m.y)));
  const yMax = yTicks[yTicks.length - 1] || 1;
  const xMax = Math.max(1, ...c.x);
  const px = (/** @type {number} */ x) => M.left + (x / xMax) * (W - M.left - M.right);
  const py = (/** @type {number} */ y) => H - M.bottom - (y / yMax) * (H - M.top - M.bottom);
  let svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`;
  svg += `<text x="${M.left}" y="16" font-size="13" font-weight="600">${escapeXml(c.title)}</text>`;
  for (const t of yTicks) svg += `<line x1="${M.left}" x2="${W - M.right}" y1="${py(t)}" y2="${py(t)}" stroke="#e5e7eb"/><text x="${M.left - 6}" y="${py(t) + 4}" text-anchor="end" fill="#6b7280">${tick(t)}</text>`;
  for (const t of niceTicks(xMax)) if (t <= xMax) svg += `<text x="${px(t)}" y="${H - M.bottom + 16}" text-anchor="middle" fill="#6b7280">${tick(t)}</text>`;
  svg += `<text x="${(W + M.left) / 2}" y="${H - 4}" text-anchor="middle" fill="#6b7280">${escapeXml(c.xLabel ?? 'seconds')}</text>`;
  svg += `<text transform="translate(12 ${(H - M.bottom + M.top) / 2}) rotate(-90)" text-anchor="middle" fill="#6b7280">${escapeXml(c.yLabel)}</text>`;
  for (const m of c.marks ?? []) svg += `<line x1="${M.left}" x2="${W - M.right}" y1="${py(m.y)}" y2="${py(m.y)}" stroke="#9ca3af" stroke-dasharray="4 3"/><text x="${W - M.right - 4}" y="${py(m.y) - 4}" text-anchor="end" fill="#6b7280">${escapeXml(m.label)}</text>`;
  c.series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length];
    let d = '';
    s.values.forEach((v, k) => {
      if (v === null || !Number.isFinite(v)) return;
      d += `${d === '' || s.values[k - 1] === null ? 'M' : 'L'}${px(c.x[k] ?? k).toFixed(1)},${py(v).toFixed(1)}`;
    });
    svg += `<path d="${d}" fill="none" stroke="${color}" stroke-width="1.8"/>`;
    svg += `<rect x="${M.left + 8 + i * 150}" y="${M.top - 2}" width="10" height="3" fill="${color}"/><text x="${M.left + 22 + i * 150}" y="${M.top + 2}">${escapeXml(s.name)}</text>`;
  });
  return `${svg}</svg>`;
}

/**
 * Grouped bars: one group per category, one bar per series (e.g. query kinds, logsvc vs limit).
 * @param {{ title: string, yLabel: string, categories: string[], series: { name: string, values: (number | null)[] }[] }} c
 */
export function barChart(c) {
  const ys = c.series.flatMap((s) => s.values.filter((v) => v !== null && Number.isFinite(v)));
  const yTicks = niceTicks(Math.max(0, ...ys));
  const yMax = yTicks[yTicks.length - 1] || 1;
  const py = (/** @type {number} */ y) => H - M.bottom - (y / yMax) * (H - M.top - M.bottom);
  const groupW = (W - M.left - M.right) / Math.max(1, c.categories.length);
  const barW = (groupW * 0.8) / Math.max(1, c.series.length);
  let svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`;
  svg += `<text x="${M.left}" y="16" font-size="13" font-weight="600">${escapeXml(c.title)}</text>`;
  for (const t of yTicks) svg += `<line x1="${M.left}" x2="${W - M.right}" y1="${py(t)}" y2="${py(t)}" stroke="#e5e7eb"/><text x="${M.left - 6}" y="${py(t) + 4}" text-anchor="end" fill="#6b7280">${tick(t)}</text>`;
  svg += `<text transform="translate(12 ${(H - M.bottom + M.top) / 2}) rotate(-90)" text-anchor="middle" fill="#6b7280">${escapeXml(c.yLabel)}</text>`;
  c.categories.forEach((cat, g) => {
    const x0 = M.left + g * groupW + groupW * 0.1;
    c.series.forEach((s, i) => {
      const v = s.values[g];
      if (v === null || v === undefined || !Number.isFinite(v)) return;
      svg += `<rect x="${(x0 + i * barW).toFixed(1)}" y="${py(v).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${(H - M.bottom - py(v)).toFixed(1)}" fill="${PALETTE[i % PALETTE.length]}"><title>${escapeXml(`${s.name} ${cat}: ${tick(v)}`)}</title></rect>`;
    });
    svg += `<text x="${(x0 + groupW * 0.4).toFixed(1)}" y="${H - M.bottom + 16}" text-anchor="middle" fill="#374151">${escapeXml(cat)}</text>`;
  });
  c.series.forEach((s, i) => {
    svg += `<rect x="${M.left + 8 + i * 150}" y="${M.top - 6}" width="10" height="10" fill="${PALETTE[i % PALETTE.length]}"/><text x="${M.left + 22 + i * 150}" y="${M.top + 3}">${escapeXml(s.name)}</text>`;
  });
  return `${svg}</svg>`;
}

/**
 * One self-contained HTML page: a title, a preformatted header (command, machine), sections of charts and text.
 * @param {{ title: string, header: string, sections: { heading: string, text?: string, charts: string[] }[] }} r
 */
export function htmlReport(r) {
  const body = r.sections
    .map((s) => `<section><h2>${escapeXml(s.heading)}</h2>${s.text === undefined ? '' : `<pre>${escapeXml(s.text)}</pre>`}<div class="charts">${s.charts.join('\n')}</div></section>`)
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeXml(r.title)}</title>
<style>body{font-family:sans-serif;margin:24px;color:#1f2937}pre{background:#f3f4f6;padding:8px;font-size:12px;overflow:auto}.charts{display:flex;flex-wrap:wrap;gap:12px}svg{background:#fff;border:1px solid #e5e7eb}</style>
</head><body><h1>${escapeXml(r.title)}</h1><pre>${escapeXml(r.header)}</pre>
${body}
</body></html>
`;
}

/**
 * The progress line a run prints each second: elapsed, rate, p99 (and whatever else it adds).
 * @param {{ label: string, elapsedSec: number, phase?: string, rate: number, unit: string, p99Ms: number | null, extra?: string }} p
 */
export function progressLine(p) {
  const el = `${Math.floor(p.elapsedSec / 60)}:${String(Math.floor(p.elapsedSec % 60)).padStart(2, '0')}`;
  const p99 = p.p99Ms === null || !Number.isFinite(p.p99Ms) ? '   -   ' : `${p.p99Ms.toFixed(1).padStart(7)}`;
  return `${p.label} ${el} ${p.phase === undefined ? '' : `${p.phase.padEnd(7)} `}${Math.round(p.rate).toLocaleString('en-US').padStart(10)} ${p.unit}  p99 ${p99} ms${p.extra === undefined ? '' : `  ${p.extra}`}`;
}
