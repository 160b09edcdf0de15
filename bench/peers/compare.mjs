/**
 * Answers of the two engines in one comparable shape, and the comparison: pure functions (unit
 * tested in test/unit/bench/peers-compare.test.ts).
 *
 * Shapes by answer kind:
 * - `count`: a number;
 * - `events`: `{ count, timestamps }` (timestamps in ms, ascending);
 * - `groups`: `{ [value]: count }`, every group;
 * - `top`: `{ [value]: count }` of the N most frequent values (ties at the tail may differ);
 * - `value`: a number, compared within a relative tolerance (estimators: percentiles, distinct counts);
 * - `histogram`: `{ [bucket start ms]: count }`, empty buckets left out.
 */

/** @typedef {'count' | 'events' | 'groups' | 'top' | 'value' | 'histogram'} AnswerKind */

/** @param {unknown} v */
const num = (v) => (typeof v === 'number' ? v : Number(v));

/**
 * logsvc rows (the JSON array of POST .../query) in the comparable shape.
 * @param {AnswerKind} kind
 * @param {Record<string, unknown>[]} rows
 * @param {{ field?: string, valueField?: string }} q
 */
export function normalizeLogsvc(kind, rows, q) {
  switch (kind) {
    case 'count':
      return rows.length === 0 ? 0 : num(rows[0]?._count);
    case 'events': {
      const timestamps = rows.map((r) => num(r['@timestamp'])).sort((a, b) => a - b);
      return { count: rows.length, timestamps };
    }
    case 'groups':
    case 'top': {
      /** @type {Record<string, number>} */
      const out = {};
      for (const r of rows) out[String(r[/** @type {string} */ (q.field)])] = num(r._count);
      return out;
    }
    case 'value':
      return rows.length === 0 ? Number.NaN : num(rows[0]?.[/** @type {string} */ (q.valueField)]);
    case 'histogram': {
      /** @type {Record<string, number>} */
      const out = {};
      for (const r of rows) {
        const n = num(r._count);
        if (n > 0) out[String(num(r._bucket))] = n;
      }
      return out;
    }
    default:
      throw new Error(`unknown answer kind ${String(kind)}`);
  }
}

/**
 * VictoriaLogs rows (JSON lines of /select/logsql/query, or the matrix of stats_query_range turned
 * into `{ _bucket, c }` rows) in the comparable shape. Counts are named `c`, values `v`, the top
 * pipe's counts `hits`. An empty group value is how VictoriaLogs groups events without the field;
 * logsvc leaves those out, so they are left out here too.
 * @param {AnswerKind} kind
 * @param {Record<string, unknown>[]} rows
 * @param {{ field?: string }} q
 */
export function normalizeVictoriaLogs(kind, rows, q) {
  switch (kind) {
    case 'count':
      return rows.length === 0 ? 0 : num(rows[0]?.c);
    case 'events': {
      const timestamps = rows.map((r) => Date.parse(String(r._time))).sort((a, b) => a - b);
      return { count: rows.length, timestamps };
    }
    case 'groups':
    case 'top': {
      /** @type {Record<string, number>} */
      const out = {};
      for (const r of rows) {
        const key = String(r[/** @type {string} */ (q.field)] ?? '');
        if (key === '') continue;
        out[key] = num(kind === 'top' ? r.hits : r.c);
      }
      return out;
    }
    case 'value':
      return rows.length === 0 ? Number.NaN : num(rows[0]?.v);
    case 'histogram': {
      /** @type {Record<string, number>} */
      const out = {};
      for (const r of rows) {
        const n = num(r.c);
        if (n > 0) out[String(num(r._bucket))] = n;
      }
      return out;
    }
    default:
      throw new Error(`unknown answer kind ${String(kind)}`);
  }
}

/**
 * @param {Record<string, number>} a
 * @param {Record<string, number>} b
 * @param {number} limit at most this many differences listed
 */
function mapDiff(a, b, limit) {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  /** @type {string[]} */
  const diffs = [];
  for (const k of keys) if (a[k] !== b[k]) diffs.push(`${k}: ${a[k] ?? 'missing'} vs ${b[k] ?? 'missing'}`);
  return diffs.length === 0 ? null : `${diffs.length} differ (logsvc vs VictoriaLogs): ${diffs.slice(0, limit).join(', ')}`;
}

/**
 * null when the two answers agree, else what differs.
 * @param {AnswerKind} kind
 * @param {any} logsvc
 * @param {any} vl
 * @param {number} [tolerance] relative, for `value` (0 = exact)
 * @returns {string | null}
 */
export function compareAnswers(kind, logsvc, vl, tolerance = 0) {
  switch (kind) {
    case 'count':
      return logsvc === vl ? null : `count ${logsvc} vs ${vl}`;
    case 'events': {
      if (logsvc.count !== vl.count) return `${logsvc.count} events vs ${vl.count}`;
      const i = logsvc.timestamps.findIndex((/** @type {number} */ t, /** @type {number} */ k) => t !== vl.timestamps[k]);
      return i < 0 ? null : `timestamp #${i}: ${logsvc.timestamps[i]} vs ${vl.timestamps[i]}`;
    }
    case 'groups':
    case 'histogram':
      return mapDiff(logsvc, vl, 6);
    case 'top': {
      // The counts, ranked, must be the same; a value both list must have the same count; which of
      // several values tied at the last place is listed may differ.
      const ranked = (/** @type {Record<string, number>} */ m) => Object.values(m).sort((x, y) => y - x);
      const ra = ranked(logsvc);
      const rb = ranked(vl);
      if (ra.length !== rb.length || ra.some((x, k) => x !== rb[k])) return `ranked counts ${JSON.stringify(ra)} vs ${JSON.stringify(rb)}`;
      const both = Object.keys(logsvc).filter((k) => k in vl);
      const bad = both.filter((k) => logsvc[k] !== vl[k]);
      if (bad.length > 0) return `counts differ for ${bad.map((k) => `${k}: ${logsvc[k]} vs ${vl[k]}`).join(', ')}`;
      const last = ra[ra.length - 1];
      const onlyOne = [...Object.keys(logsvc).filter((k) => !(k in vl)), ...Object.keys(vl).filter((k) => !(k in logsvc))];
      const untied = onlyOne.filter((k) => (logsvc[k] ?? vl[k]) !== last);
      return untied.length === 0 ? null : `values listed by one side only: ${untied.join(', ')}`;
    }
    case 'value': {
      if (!Number.isFinite(logsvc) || !Number.isFinite(vl)) return `value ${logsvc} vs ${vl}`;
      const scale = Math.max(Math.abs(logsvc), Math.abs(vl));
      const rel = scale === 0 ? 0 : Math.abs(logsvc - vl) / scale;
      return rel <= tolerance ? null : `value ${logsvc} vs ${vl} (${(rel * 100).toFixed(2)}% apart, tolerance ${(tolerance * 100).toFixed(2)}%)`;
    }
    default:
      return `unknown answer kind ${String(kind)}`;
  }
}
