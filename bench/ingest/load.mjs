/**
 * The load of one benchmark phase: prepared bodies sent over a pool of keep-alive connections,
 * either closed-loop (each connection sends its next request when the previous one is acknowledged:
 * the maximum the server sustains) or open-loop at a fixed rate of events per second (latency at a
 * given load). A warm-up comes first and is not measured; then the measured window. Counters are
 * kept for the window and, separately, for everything acknowledged (the raw input a node stored).
 *
 * Latency is per request, from the moment it was sent (closed loop) or was due (open loop, so that a
 * server falling behind shows as latency rather than as a silently lower rate) to the moment its
 * answer arrived.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { postBody } from '../lib/http.mjs';
import { Samples } from '../lib/stats.mjs';

/** @typedef {import('../lib/bodies.mjs').PreparedBody} PreparedBody */

/** In open loop, due requests beyond this many per connection in flight are skipped and counted. */
const MAX_OUTSTANDING_PER_CONNECTION = 32;
/** A closed-loop connection that got an error waits this long before its next request. */
const ERROR_BACKOFF_MS = 100;
/** After the window, answers still outstanding are awaited at most this long. */
const DRAIN_TIMEOUT_MS = 30_000;

/**
 * @typedef {object} LoadOptions
 * @property {import('undici').Pool} pool
 * @property {string} path
 * @property {Record<string, string>} headers
 * @property {PreparedBody[]} bodies
 * @property {boolean} gzip send the gzip versions
 * @property {number} connections
 * @property {number} warmupMs
 * @property {number} measureMs
 * @property {number} rate events per second; 0 = closed loop
 * @property {number} batch events per body
 */

export class LoadRun {
  /** @param {LoadOptions} o */
  constructor(o) {
    this.o = o;
    this.t0 = 0;
    this.measureStart = 0;
    this.end = 0;
    this.nextBody = 0;
    this.inFlight = 0;
    // Measured window.
    this.events = 0;
    this.requests = 0;
    this.rawBytes = 0;
    this.wireBytes = 0;
    this.errors = 0;
    this.skipped = 0;
    this.latency = new Samples();
    // Whole run, warm-up and late answers included: what the server acknowledged.
    this.ackedEvents = 0;
    this.ackedRawBytes = 0;
    this.allErrors = 0;
    /** @type {Map<string, number>} error kind (HTTP status or exception) -> count, whole run */
    this.errorKinds = new Map();
    /** @type {string | null} */
    this.firstError = null;
    /** Events acknowledged so far (whole run), for per-second progress. */
    this.progressEvents = 0;
    /** Latencies (ms) of the acknowledgements since the progress line last took them. */
    /** @type {number[]} */
    this.recentLatency = [];
  }

  /**
   * Runs warm-up and window; resolves when every answer is in (or the drain bound passed).
   * @returns {Promise<void>}
   */
  async run() {
    this.t0 = performance.now();
    this.measureStart = this.t0 + this.o.warmupMs;
    this.end = this.measureStart + this.o.measureMs;
    if (this.o.rate > 0) await this.openLoop();
    else await this.closedLoop();
  }

  /** @returns {PreparedBody} */
  take() {
    const b = /** @type {PreparedBody} */ (this.o.bodies[this.nextBody % this.o.bodies.length]);
    this.nextBody++;
    return b;
  }

  /**
   * Sends one body; `from` is when the latency clock starts.
   * @param {PreparedBody} b
   * @param {number} from
   * @returns {Promise<boolean>} acknowledged
   */
  async send(b, from) {
    const payload = this.o.gzip ? /** @type {Buffer} */ (b.gzip) : b.json;
    this.inFlight++;
    let status = 0;
    /** @type {string | null} */
    let text = null;
    try {
      ({ status, text } = await postBody(this.o.pool, this.o.path, this.o.headers, payload));
    } catch (err) {
      text = `${/** @type {Error} */ (err).name}: ${/** @type {Error} */ (err).message}`;
    }
    this.inFlight--;
    const done = performance.now();
    const ok = status >= 200 && status < 300;
    const inWindow = done >= this.measureStart && done <= this.end;
    if (ok) {
      this.ackedEvents += b.events;
      this.ackedRawBytes += b.rawBytes;
      this.progressEvents += b.events;
      this.recentLatency.push(done - from);
      if (inWindow) {
        this.events += b.events;
        this.rawBytes += b.rawBytes;
        this.wireBytes += payload.length;
        this.requests++;
        this.latency.add(done - from);
      }
      return true;
    }
    const kind = status === 0 ? 'exception' : `HTTP ${status}`;
    this.errorKinds.set(kind, (this.errorKinds.get(kind) ?? 0) + 1);
    this.allErrors++;
    if (inWindow) this.errors++;
    this.firstError ??= `${kind}: ${(text ?? '').slice(0, 300)}`;
    return false;
  }

  async closedLoop() {
    const worker = async () => {
      for (;;) {
        const now = performance.now();
        if (now >= this.end) return;
        if (!(await this.send(this.take(), now))) await sleep(ERROR_BACKOFF_MS);
      }
    };
    const workers = Array.from({ length: this.o.connections }, () => worker());
    await this.bounded(Promise.all(workers));
  }

  async openLoop() {
    const perMs = this.o.rate / this.o.batch / 1000; // requests per millisecond
    const maxOutstanding = this.o.connections * MAX_OUTSTANDING_PER_CONNECTION;
    /** @type {Set<Promise<boolean>>} */
    const pending = new Set();
    let k = 0;
    for (;;) {
      const now = performance.now();
      if (now >= this.end) break;
      // Every request whose due time has passed goes out now, stamped with its due time.
      for (let due = this.t0 + k / perMs; due <= now && due < this.end; due = this.t0 + ++k / perMs) {
        if (this.inFlight >= maxOutstanding) {
          if (due >= this.measureStart) this.skipped++;
          continue;
        }
        const p = this.send(this.take(), due);
        pending.add(p);
        void p.finally(() => pending.delete(p));
      }
      await sleep(Math.max(1, Math.min(20, this.t0 + k / perMs - performance.now())));
    }
    await this.bounded(Promise.all(pending));
  }

  /** @param {Promise<unknown>} p */
  async bounded(p) {
    /** @type {NodeJS.Timeout | undefined} */
    let timer;
    const timeout = new Promise((resolve) => (timer = setTimeout(resolve, DRAIN_TIMEOUT_MS)));
    await Promise.race([p, timeout]);
    clearTimeout(timer);
  }
}
