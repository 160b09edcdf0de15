/**
 * The query corpus: access-log events from the seeded dataset (bench/lib/datasets.mjs), generated
 * while they are sent (a 2 GB corpus does not fit a pre-built pool), through
 * `/api/v1/ingest/humio-structured` on N keep-alive connections.
 *
 * Timestamps: the dataset's own clock (2024-05-06 onwards, ~500 events/s) is replaced. Event i gets
 * `start + floor(span * rawBefore / target)`, where rawBefore is the raw bytes generated before it
 * and target the corpus size: timestamps rise evenly (per byte) from `start = now - hours` to about
 * now, so the corpus fills the range whatever its size. The line's own `[dd/Mon/yyyy:HH:MM:SS +0000]`
 * is rewritten to the same second (same length, so raw byte counts are unchanged).
 *
 * Rare events: `rare` of the events get the user id RARE_TOKEN (in the line and in the `userid`
 * attribute), the k-th one at the first event at or past (k + 0.5) / rare of the corpus, so they
 * are spread evenly over the time range; the token appears nowhere else.
 *
 * Everything a query's answer can be checked against is counted on the way: events, raw bytes,
 * events per status code, the rare events' timestamps.
 */
import { percentile } from '../lib/stats.mjs';
import { progressLine } from '../lib/plot.mjs';
import { createDataset } from '../lib/datasets.mjs';
import { createLoadPool, postBody } from '../lib/http.mjs';
import { RARE_TOKEN } from './options.mjs';

export const INGEST_PATH = '/api/v1/ingest/humio-structured';
/** Bodies rotate through these hosts: four datasources, as in the ingest benchmark. */
const HOSTS = ['web-01', 'web-02', 'web-03', 'web-04'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** `06/May/2024:08:00:00 +0000`, the length of every access-log date. */
const CLF_DATE_CHARS = 26;
/** Wait before resending a body the node refused with 503/429 (backpressure: nothing was stored). */
const BACKOFF_MS = 500;
/** A body that fails this many times in a row ends the run. */
const MAX_ATTEMPTS = 240;

/** @param {number} n */
const pad2 = (n) => (n < 10 ? `0${n}` : String(n));

/** @param {number} ms */
function clfDate(ms) {
  const d = new Date(ms);
  return `${pad2(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())} +0000`;
}

/**
 * @typedef {object} CorpusStats
 * @property {number} events
 * @property {number} rawBytes UTF-8 bytes of every raw string
 * @property {number} bodyBytes request body bytes sent (successful requests)
 * @property {number} requests
 * @property {number} startMs the range's start (first event's timestamp)
 * @property {number} endMs the range's end as planned (now at the start of the ingest)
 * @property {number} minTs
 * @property {number} maxTs
 * @property {number[]} rareTimestamps
 * @property {Record<string, number>} statusCounts events per `statuscode` attribute
 */

/** Generates the corpus body by body; deterministic for a seed, a target size and a start time. */
export class CorpusGenerator {
  /**
   * @param {object} o
   * @param {number} o.seed
   * @param {number} o.targetRawBytes
   * @param {number} o.startMs
   * @param {number} o.spanMs
   * @param {number} o.rare
   * @param {number} o.batch
   */
  constructor(o) {
    this.o = o;
    this.next = createDataset('accesslog', o.seed);
    this.rawBefore = 0;
    this.events = 0;
    this.bodies = 0;
    this.rareDone = 0;
    /** @type {number[]} */
    this.rareTimestamps = [];
    /** @type {Map<string, number>} */
    this.statusCounts = new Map();
    this.minTs = Infinity;
    this.maxTs = -Infinity;
  }

  get done() {
    return this.rawBefore >= this.o.targetRawBytes && this.rareDone >= this.o.rare;
  }

  /**
   * The next request body, or null when the corpus is complete.
   * @returns {{ json: Buffer, events: number, rawBytes: number } | null}
   */
  nextBody() {
    if (this.done) return null;
    const { batch, startMs, spanMs, targetRawBytes, rare } = this.o;
    const events = [];
    let raw = 0;
    while (events.length < batch && !this.done) {
      const e = this.next();
      const ts = startMs + Math.floor((spanMs * Math.min(this.rawBefore, targetRawBytes)) / targetRawBytes);
      const at = e.rawstring.indexOf(' [');
      let line = `${e.rawstring.slice(0, at + 2)}${clfDate(ts)}${e.rawstring.slice(at + 2 + CLF_DATE_CHARS)}`;
      const attributes = e.attributes;
      if (this.rareDone < rare && this.rawBefore >= ((this.rareDone + 0.5) / rare) * targetRawBytes) {
        // `client - userid [date] ...`: the user id becomes the rare token, in the line and the field.
        line = `${attributes.client} - ${RARE_TOKEN}${line.slice(at)}`;
        attributes.userid = RARE_TOKEN;
        this.rareDone++;
        this.rareTimestamps.push(ts);
      }
      const bytes = Buffer.byteLength(line);
      raw += bytes;
      this.rawBefore += bytes;
      const status = String(attributes.statuscode);
      this.statusCounts.set(status, (this.statusCounts.get(status) ?? 0) + 1);
      if (ts < this.minTs) this.minTs = ts;
      if (ts > this.maxTs) this.maxTs = ts;
      events.push({ timestamp: ts, attributes, rawstring: line });
    }
    const host = /** @type {string} */ (HOSTS[this.bodies % HOSTS.length]);
    this.bodies++;
    this.events += events.length;
    return { json: Buffer.from(JSON.stringify([{ tags: { host, source: 'accesslog' }, events }])), events: events.length, rawBytes: raw };
  }
}

/**
 * @typedef {object} IngestResult
 * @property {CorpusStats} corpus
 * @property {number} seconds from the first request to the last acknowledgement
 * @property {number} eventsPerSec
 * @property {number} rawMBps
 * @property {number} bodyMBps
 * @property {number} retriedBackpressure bodies resent after a 503/429 (nothing stored the first time)
 * @property {number} retriedTransport bodies resent after a transport error (may have been stored twice)
 * @property {string | null} firstError
 * @property {number} generatorCpuCores this process, over the ingest
 * @property {number | null} nodeCpuCores the node, over the ingest (null without its pid)
 * @property {{ t: number, events: number, rawMB: number, p99: number | null, cpuCores: number | null, rssBytes: number | null }[]} timeline one point per progress interval
 */

/**
 * Sends the whole corpus; every body is acknowledged (2xx) or the run fails.
 * @param {object} o
 * @param {string} o.url
 * @param {string} o.token ingest token
 * @param {CorpusGenerator} o.generator
 * @param {number} o.connections
 * @param {number} o.endMs
 * @param {() => Promise<number | null>} o.nodeCpu CPU seconds of the node so far
 * @param {() => Promise<number | null>} [o.nodeRss] RSS bytes of the node now
 * @param {(line: string) => void} o.progress
 * @returns {Promise<IngestResult>}
 */
export async function ingestCorpus(o) {
  const pool = createLoadPool(o.url, o.connections);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${o.token}` };
  const g = o.generator;
  let ackedEvents = 0;
  let ackedRaw = 0;
  let bodyBytes = 0;
  let requests = 0;
  let retriedBackpressure = 0;
  let retriedTransport = 0;
  /** @type {string | null} */
  let firstError = null;
  let failed = false;
  const target = g.o.targetRawBytes;

  const cpu0 = process.cpuUsage();
  const nodeCpu0 = await o.nodeCpu();
  const t0 = performance.now();
  let lastT = t0;
  let lastEvents = 0;
  let lastRaw = 0;
  let lastCpu = nodeCpu0;
  /** @type {number[]} acknowledgement latencies (ms) since the last progress line */
  const recent = [];
  /** @type {IngestResult['timeline']} */
  const timeline = [];
  const ticker = setInterval(() => {
    const now = performance.now();
    const secs = (now - lastT) / 1000;
    const lat = Float64Array.from(recent.splice(0)).sort();
    const point = { t: (now - t0) / 1000, events: (ackedEvents - lastEvents) / secs, rawMB: (ackedRaw - lastRaw) / 1e6 / secs, p99: lat.length === 0 ? null : percentile(lat, 99), cpuCores: /** @type {number | null} */ (null), rssBytes: /** @type {number | null} */ (null) };
    timeline.push(point);
    o.progress(progressLine({ label: '[ingest]', elapsedSec: point.t, rate: point.events, unit: 'events/s', p99Ms: point.p99, extra: `${(ackedRaw / 1e6).toFixed(0)} / ${(target / 1e6).toFixed(0)} MB raw (${((100 * ackedRaw) / target).toFixed(1)} %)  retries ${retriedBackpressure + retriedTransport}` }));
    void Promise.all([o.nodeCpu(), o.nodeRss?.() ?? null]).then(([cpu, rss]) => {
      if (cpu !== null && lastCpu !== null) point.cpuCores = (cpu - lastCpu) / secs;
      lastCpu = cpu;
      point.rssBytes = rss;
    });
    lastT = now;
    lastEvents = ackedEvents;
    lastRaw = ackedRaw;
  }, 2000);

  const connection = async () => {
    for (;;) {
      if (failed) return;
      const body = g.nextBody();
      if (body === null) return;
      for (let attempt = 1; ; attempt++) {
        let status = 0;
        let text = '';
        const sent = performance.now();
        try {
          const r = await postBody(pool, INGEST_PATH, headers, body.json);
          status = r.status;
          text = r.text ?? '';
        } catch (err) {
          text = `${/** @type {Error} */ (err).name}: ${/** @type {Error} */ (err).message}`;
        }
        if (status >= 200 && status < 300) {
          ackedEvents += body.events;
          ackedRaw += body.rawBytes;
          recent.push(performance.now() - sent);
          bodyBytes += body.json.length;
          requests++;
          break;
        }
        firstError ??= `HTTP ${status || 'transport error'}: ${text.slice(0, 300)}`;
        if (status !== 0 && status !== 503 && status !== 429) {
          failed = true;
          throw new Error(`ingest refused a body with HTTP ${status}: ${text.slice(0, 500)}`);
        }
        if (attempt >= MAX_ATTEMPTS) {
          failed = true;
          throw new Error(`ingest: a body failed ${attempt} times in a row; last: ${firstError}`);
        }
        if (status === 0) retriedTransport++;
        else retriedBackpressure++;
        await new Promise((r) => setTimeout(r, BACKOFF_MS));
      }
    }
  };

  try {
    await Promise.all(Array.from({ length: o.connections }, connection));
  } finally {
    clearInterval(ticker);
    await pool.destroy();
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const nodeCpu1 = await o.nodeCpu();
  if (ackedEvents !== g.events) throw new Error(`ingest: ${g.events} events generated but ${ackedEvents} acknowledged`);
  return {
    corpus: {
      events: g.events,
      rawBytes: g.rawBefore,
      bodyBytes,
      requests,
      startMs: g.o.startMs,
      endMs: o.endMs,
      minTs: g.minTs,
      maxTs: g.maxTs,
      rareTimestamps: g.rareTimestamps,
      statusCounts: Object.fromEntries([...g.statusCounts].sort((a, b) => a[0].localeCompare(b[0]))),
    },
    seconds,
    eventsPerSec: g.events / seconds,
    rawMBps: g.rawBefore / 1e6 / seconds,
    bodyMBps: bodyBytes / 1e6 / seconds,
    retriedBackpressure,
    retriedTransport,
    firstError,
    generatorCpuCores: (cpu.user + cpu.system) / 1e6 / seconds,
    nodeCpuCores: nodeCpu0 === null || nodeCpu1 === null ? null : (nodeCpu1 - nodeCpu0) / seconds,
    timeline,
  };
}
