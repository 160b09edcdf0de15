/**
 * The timed queries: each one through `POST /api/v1/repositories/<repo>/query` (Accept:
 * application/json), `--repeat` times in a row, wall time from sending the request to the last byte
 * of the answer, with the node's CPU time (user + system, all threads, /proc) and peak RSS over each
 * run. Then once more as a query job, polled until done, for the node's own account of the work
 * (processedBytes, processedEvents, totalWork, timeMillis, warnings). Every answer is checked
 * against what the corpus generator counted.
 */
import { readCpuSeconds, readVmRss } from '../lib/processes.mjs';
import { RARE_TOKEN } from './options.mjs';

/** Poll interval for query jobs: shorter than the node's pollAfter hint, to see the end promptly. */
const JOB_POLL_MS = 100;
/** RSS sampling interval during a query. */
const RSS_SAMPLE_MS = 100;

/**
 * @typedef {object} QueryCase
 * @property {string} name
 * @property {string} queryString
 * @property {string} what
 * @property {(rows: any[]) => string | null} check null if the answer is right, else what is wrong
 */

/**
 * @typedef {object} RunSample
 * @property {number} seconds wall time
 * @property {number | null} cpuSeconds node CPU over the run
 * @property {number | null} rssMaxBytes node RSS, largest sample over the run
 * @property {number} status HTTP status
 * @property {number} rows
 * @property {string | null} error
 * @property {string | null} wrong what the check found wrong
 */

/**
 * @typedef {object} QueryResult
 * @property {string} name
 * @property {string} queryString
 * @property {string} what
 * @property {RunSample[]} runs
 * @property {boolean} ok every run answered 200 and right
 * @property {number | null} bestSeconds
 * @property {number | null} medianSeconds
 * @property {number | null} bestCpuSeconds node CPU of the fastest run
 * @property {number | null} rawMBps corpus raw MB / best seconds
 * @property {number | null} eventsPerSec corpus events / best seconds
 * @property {number | null} cores node CPU seconds / wall seconds, fastest run
 * @property {number | null} rawMBpsPerCore corpus raw MB / node CPU seconds, fastest run
 * @property {number | null} rssMaxBytes over every run
 * @property {{ processedBytes: unknown, processedEvents: unknown, totalWork: unknown, workDone: unknown, timeMillis: unknown, warnings: unknown, seconds: number } | { error: string } | null} job
 */

/**
 * The queries of the issue, with their checks.
 * @param {import('./corpus.mjs').CorpusStats} c
 * @param {number} timechartRows rows timechart() must give over the query range
 * @returns {QueryCase[]}
 */
export function queryCases(c, timechartRows) {
  const rare = c.rareTimestamps.length;
  /** @param {any[]} rows */
  const rareRows = (rows) => {
    if (rows.length !== rare) return `${rows.length} events, expected ${rare}`;
    const bad = rows.filter((r) => typeof r['@rawstring'] !== 'string' || !r['@rawstring'].includes(RARE_TOKEN));
    if (bad.length > 0) return `${bad.length} events without the token in @rawstring, e.g. ${JSON.stringify(bad[0]).slice(0, 200)}`;
    const got = rows.map((r) => Number(r['@timestamp'])).sort((a, b) => a - b);
    const want = [...c.rareTimestamps].sort((a, b) => a - b);
    if (got.some((t, i) => t !== want[i])) return `timestamps ${JSON.stringify(got.slice(0, 5))}... expected ${JSON.stringify(want.slice(0, 5))}...`;
    return null;
  };
  /** @param {any[]} rows @param {string} field */
  const sumOf = (rows, field) => rows.reduce((n, r) => n + Number(r[field]), 0);
  return [
    {
      name: 'rare token (free text)',
      queryString: RARE_TOKEN,
      what: `free-text search; ${rare} events hold the token`,
      check: rareRows,
    },
    {
      name: 'rare token (phrase)',
      queryString: `" ${RARE_TOKEN} "`,
      what: `free text with the token bounded by spaces inside the search text (so a whole-token skip index can apply); ${rare} events`,
      check: rareRows,
    },
    {
      name: 'rare token (field)',
      queryString: `userid=${RARE_TOKEN}`,
      what: `field filter on userid; ${rare} events`,
      check: rareRows,
    },
    {
      name: 'count()',
      queryString: 'count()',
      what: 'every event',
      check: (rows) => {
        if (rows.length !== 1) return `${rows.length} rows, expected 1`;
        const n = Number(rows[0]._count);
        return n === c.events ? null : `_count ${rows[0]._count}, expected ${c.events} (${n > c.events ? '+' : ''}${n - c.events})`;
      },
    },
    {
      name: 'groupBy(statuscode)',
      queryString: 'groupBy(statuscode)',
      what: `${Object.keys(c.statusCounts).length} groups`,
      check: (rows) => {
        /** @type {Record<string, number>} */
        const got = {};
        for (const r of rows) got[String(r.statuscode)] = Number(r._count);
        const keys = new Set([...Object.keys(got), ...Object.keys(c.statusCounts)]);
        const diff = [...keys].filter((k) => got[k] !== c.statusCounts[k]).map((k) => `${k}: ${got[k] ?? 'missing'} vs ${c.statusCounts[k] ?? 'none'}`);
        return diff.length === 0 ? null : `${diff.length} groups differ (got vs expected): ${diff.slice(0, 6).join(', ')}`;
      },
    },
    {
      name: 'timechart()',
      queryString: 'timechart()',
      what: `${timechartRows} buckets`,
      check: (rows) => {
        /** @type {string[]} */
        const wrong = [];
        if (rows.length !== timechartRows) wrong.push(`${rows.length} rows, expected ${timechartRows}`);
        const sum = sumOf(rows, '_count');
        if (sum !== c.events) wrong.push(`_count sums to ${sum}, expected ${c.events}`);
        return wrong.length === 0 ? null : wrong.join('; ');
      },
    },
  ];
}

/**
 * One POST with a JSON body, answer read whole.
 * @param {import('undici').Pool} client
 * @param {string} path
 * @param {string} token
 * @param {unknown} body
 * @param {number} timeoutMs
 */
async function postJson(client, path, token, body, timeoutMs) {
  const res = await client.request({
    path,
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

/**
 * @param {import('undici').Pool} client
 * @param {'GET' | 'DELETE'} method
 * @param {string} path
 * @param {string} token
 */
async function call(client, method, path, token) {
  const res = await client.request({ path, method, headers: { accept: 'application/json', authorization: `Bearer ${token}` } });
  return { status: res.statusCode, text: await res.body.text() };
}

/**
 * Samples the node's RSS until stopped.
 * @param {number | null} pid
 */
function rssSampler(pid) {
  let max = /** @type {number | null} */ (null);
  const take = async () => {
    if (pid === null) return;
    const v = await readVmRss(pid);
    if (v !== null && (max === null || v > max)) max = v;
  };
  void take();
  const timer = setInterval(() => void take(), RSS_SAMPLE_MS);
  return async () => {
    clearInterval(timer);
    await take();
    return max;
  };
}

/** @param {number[]} xs */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? /** @type {number} */ (s[m]) : (/** @type {number} */ (s[m - 1]) + /** @type {number} */ (s[m])) / 2;
}

/**
 * Times one query `repeat` times, then runs it once as a query job.
 * @param {object} o
 * @param {import('undici').Pool} o.client
 * @param {string} o.repo
 * @param {string} o.token a token that may query the repository
 * @param {QueryCase} o.q
 * @param {string} o.start
 * @param {number} o.repeat
 * @param {number} o.timeoutMs
 * @param {number | null} o.pid the node's pid, for CPU and RSS
 * @param {import('./corpus.mjs').CorpusStats} o.corpus
 * @param {(line: string) => void} o.progress
 * @returns {Promise<QueryResult>}
 */
export async function runQuery(o) {
  const path = `/api/v1/repositories/${encodeURIComponent(o.repo)}/query`;
  const request = { queryString: o.q.queryString, start: o.start, isLive: false };
  /** @type {RunSample[]} */
  const runs = [];
  for (let i = 0; i < o.repeat; i++) {
    const stopRss = rssSampler(o.pid);
    const cpu0 = o.pid === null ? null : await readCpuSeconds(o.pid);
    const t0 = performance.now();
    /** @type {RunSample} */
    let sample;
    try {
      const r = await postJson(o.client, path, o.token, request, o.timeoutMs);
      const seconds = (performance.now() - t0) / 1000;
      const cpu1 = o.pid === null ? null : await readCpuSeconds(o.pid);
      const cpuSeconds = cpu0 === null || cpu1 === null ? null : cpu1 - cpu0;
      if (r.status !== 200) {
        sample = { seconds, cpuSeconds, rssMaxBytes: await stopRss(), status: r.status, rows: 0, error: `HTTP ${r.status}: ${r.text.trim().slice(0, 400)}`, wrong: null };
      } else {
        let rows;
        try {
          rows = JSON.parse(r.text);
        } catch {
          rows = null;
        }
        if (!Array.isArray(rows)) {
          sample = { seconds, cpuSeconds, rssMaxBytes: await stopRss(), status: r.status, rows: 0, error: `not a JSON array: ${r.text.slice(0, 200)}`, wrong: null };
        } else {
          sample = { seconds, cpuSeconds, rssMaxBytes: await stopRss(), status: r.status, rows: rows.length, error: null, wrong: o.q.check(rows) };
        }
      }
    } catch (err) {
      sample = { seconds: (performance.now() - t0) / 1000, cpuSeconds: null, rssMaxBytes: await stopRss(), status: 0, rows: 0, error: `${/** @type {Error} */ (err).name}: ${/** @type {Error} */ (err).message}`, wrong: null };
    }
    runs.push(sample);
    o.progress(
      `[query] ${o.q.name.padEnd(24)} run ${i + 1}/${o.repeat}: ${sample.seconds.toFixed(3)} s` +
        `${sample.cpuSeconds === null ? '' : `, node CPU ${sample.cpuSeconds.toFixed(2)} s`}, ${sample.rows} rows` +
        `${sample.error === null ? '' : `, ERROR ${sample.error}`}${sample.wrong === null ? '' : `, WRONG ${sample.wrong}`}`,
    );
    // A query that errors will error again: one attempt is the finding.
    if (sample.error !== null) break;
  }

  const good = runs.filter((r) => r.error === null);
  const best = good.length === 0 ? null : good.reduce((a, b) => (b.seconds < a.seconds ? b : a));
  const c = o.corpus;
  const job = good.length === 0 ? null : await runJob(o);
  const rss = runs.map((r) => r.rssMaxBytes).filter((v) => v !== null);
  return {
    name: o.q.name,
    queryString: o.q.queryString,
    what: o.q.what,
    runs,
    ok: good.length === runs.length && runs.every((r) => r.wrong === null),
    bestSeconds: best?.seconds ?? null,
    medianSeconds: good.length === 0 ? null : median(good.map((r) => r.seconds)),
    bestCpuSeconds: best?.cpuSeconds ?? null,
    rawMBps: best === null ? null : c.rawBytes / 1e6 / best.seconds,
    eventsPerSec: best === null ? null : c.events / best.seconds,
    cores: best?.cpuSeconds == null ? null : best.cpuSeconds / best.seconds,
    rawMBpsPerCore: best?.cpuSeconds == null || best.cpuSeconds <= 0 ? null : c.rawBytes / 1e6 / best.cpuSeconds,
    rssMaxBytes: rss.length === 0 ? null : Math.max(.../** @type {number[]} */ (rss)),
    job,
  };
}

/**
 * The query once more as a job: create, poll until done, delete.
 * @param {Parameters<typeof runQuery>[0]} o
 */
async function runJob(o) {
  const base = `/api/v1/repositories/${encodeURIComponent(o.repo)}/queryjobs`;
  const t0 = performance.now();
  try {
    const created = await postJson(o.client, base, o.token, { queryString: o.q.queryString, start: o.start, isLive: false }, o.timeoutMs);
    if (created.status !== 200) return { error: `create: HTTP ${created.status}: ${created.text.trim().slice(0, 300)}` };
    const id = JSON.parse(created.text).id;
    if (typeof id !== 'string') return { error: `create: no id in ${created.text.slice(0, 200)}` };
    try {
      for (;;) {
        const p = await call(o.client, 'GET', `${base}/${encodeURIComponent(id)}`, o.token);
        if (p.status !== 200) return { error: `poll: HTTP ${p.status}: ${p.text.trim().slice(0, 300)}` };
        const doc = JSON.parse(p.text);
        if (doc.done === true) {
          const m = doc.metaData ?? {};
          return {
            processedBytes: m.processedBytes,
            processedEvents: m.processedEvents,
            totalWork: m.totalWork,
            workDone: m.workDone,
            timeMillis: m.timeMillis,
            warnings: m.warnings,
            seconds: (performance.now() - t0) / 1000,
          };
        }
        if (performance.now() - t0 > o.timeoutMs) return { error: `not done after ${o.timeoutMs / 1000} s` };
        await new Promise((r) => setTimeout(r, JOB_POLL_MS));
      }
    } finally {
      await call(o.client, 'DELETE', `${base}/${encodeURIComponent(id)}`, o.token).catch(() => undefined);
    }
  } catch (err) {
    return { error: `${/** @type {Error} */ (err).name}: ${/** @type {Error} */ (err).message}` };
  }
}
