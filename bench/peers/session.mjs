/**
 * What run.mjs and ask.mjs share: sending a corpus' bodies to a server, and asking one question of
 * both servers (a warm-up each, then timed runs alternating the two, server CPU per request from
 * /proc, every answer normalized for compare.mjs).
 */
import { readCpuSeconds } from '../lib/processes.mjs';
import { normalizeLogsvc, normalizeVictoriaLogs } from './compare.mjs';
import { BodyReader } from './corpus.mjs';
import { vlQuery, vlStatsRange } from './victorialogs.mjs';

export const QUERY_TIMEOUT_MS = 300_000;

/** The logsvc node's config: blocks reach segments 5 s after their first event, ingest never refused for backlog. */
export const NODE_CONFIG = `# written by bench/peers
[digest]
flush_block_seconds = 5

[ingest]
max_undigested_bytes = 68719476736

[health]
grace_period_seconds = 600
`;

/** @param {number[]} xs */
export function median(xs) {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? /** @type {number} */ (s[m]) : (/** @type {number} */ (s[m - 1]) + /** @type {number} */ (s[m])) / 2;
}

/**
 * Sends every body of a file (or its first `o.maxBodies`), `connections` at a time; refused (503)
 * batches are sent again after a pause. `o.latencies` collects each acknowledged request's time
 * from sending to its answer, in ms.
 * @param {import('undici').Pool} pool
 * @param {string} path
 * @param {Record<string, string>} headers
 * @param {string} file
 * @param {number} pid the server's pid, for its CPU time
 * @param {number} events
 * @param {number} connections
 * @param {{ maxBodies?: number, latencies?: number[] }} [o]
 */
export async function load(pool, path, headers, file, pid, events, connections, o = {}) {
  const reader = new BodyReader(file);
  const cpu0 = await readCpuSeconds(pid);
  const t0 = performance.now();
  let sent = 0;
  let taken = 0;
  let retries = 0;
  const next = () => (taken++ < (o.maxBodies ?? Infinity) ? reader.next() : null);
  const worker = async () => {
    for (let body = next(); body !== null; body = next()) {
      for (;;) {
        const r0 = performance.now();
        const res = await pool.request({ path, method: 'POST', headers, body });
        if (res.statusCode >= 200 && res.statusCode < 300) {
          await res.body.dump();
          o.latencies?.push(performance.now() - r0);
          break;
        }
        const text = await res.body.text();
        if (res.statusCode !== 503 && res.statusCode !== 429) throw new Error(`POST ${path} answered HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
        retries++;
        await new Promise((r) => setTimeout(r, 200));
      }
      sent++;
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, worker));
  } finally {
    reader.close();
  }
  return { seconds: (performance.now() - t0) / 1000, cpu0, bodies: sent, retries, events };
}

/**
 * @typedef {object} Asker
 * @property {import('undici').Pool} logsvc control client of the logsvc node
 * @property {number} logsvcPid
 * @property {string} adminToken
 * @property {string} repo logsvc repository
 * @property {import('undici').Pool} vl client of VictoriaLogs
 * @property {number} vlPid
 * @property {number} project VictoriaLogs tenant project
 * @property {{ start: number, end: number }} range ms
 */

/**
 * One question, one warm-up each, then `repeat` timed runs alternating logsvc and VictoriaLogs.
 * @param {Asker} a
 * @param {import('./questions.mjs').Question} q
 * @param {number} repeat
 */
export async function timeQuestion(a, q, repeat) {
  const askLogsvc = async () => {
    const cpu0 = await readCpuSeconds(a.logsvcPid);
    const t0 = performance.now();
    const res = await a.logsvc.request({
      path: `/api/v1/repositories/${encodeURIComponent(a.repo)}/query`,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${a.adminToken}` },
      body: JSON.stringify({ queryString: q.logsvc, start: a.range.start, end: a.range.end, isLive: false }),
      headersTimeout: QUERY_TIMEOUT_MS,
      bodyTimeout: QUERY_TIMEOUT_MS,
    });
    const text = await res.body.text();
    const ms = performance.now() - t0;
    const cpu1 = await readCpuSeconds(a.logsvcPid);
    if (res.statusCode !== 200) throw new Error(`logsvc answered HTTP ${res.statusCode} to ${q.logsvc}: ${text.slice(0, 300)}`);
    return { ms, cpuMs: cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) * 1000, answer: normalizeLogsvc(q.answer, JSON.parse(text), q) };
  };
  const askVl = async () => {
    const cpu0 = await readCpuSeconds(a.vlPid);
    const t0 = performance.now();
    const r = q.vlEndpoint === 'stats_query_range' ? await vlStatsRange(a.vl, a.project, q.vl, a.range, /** @type {string} */ (q.step), QUERY_TIMEOUT_MS) : await vlQuery(a.vl, a.project, q.vl, a.range, QUERY_TIMEOUT_MS);
    const ms = performance.now() - t0;
    const cpu1 = await readCpuSeconds(a.vlPid);
    if (r.status !== 200) throw new Error(`VictoriaLogs answered HTTP ${r.status} to ${q.vl}: ${r.text.slice(0, 300)}`);
    return { ms, cpuMs: cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) * 1000, answer: normalizeVictoriaLogs(q.answer, r.rows, q) };
  };
  /** @type {{ ms: number, cpuMs: number | null, answer: any }[]} */
  const L = [];
  /** @type {{ ms: number, cpuMs: number | null, answer: any }[]} */
  const V = [];
  let error = null;
  try {
    await askLogsvc();
    await askVl();
    for (let i = 0; i < repeat; i++) {
      if (i % 2 === 0) {
        L.push(await askLogsvc());
        V.push(await askVl());
      } else {
        V.push(await askVl());
        L.push(await askLogsvc());
      }
    }
  } catch (err) {
    error = /** @type {Error} */ (err).message;
  }
  return { L, V, error };
}
