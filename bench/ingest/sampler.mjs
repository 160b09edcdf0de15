/**
 * Server-side numbers of one phase, sampled once a second over the measured window: RSS and
 * event-loop delay from the server's root-only `GET /api/v1/metrics` when it answers 200 (the window
 * is reset at its start with `?reset=true`, so the last sample covers exactly the window), otherwise
 * RSS from /proc/<pid>/status and event-loop delay reported as unavailable; CPU time from
 * /proc/<pid>/stat when the process is ours.
 */
import { createControlClient, getJson } from '../lib/http.mjs';
import { readCpuSeconds, readVmRss } from '../lib/processes.mjs';
import { slope } from '../lib/stats.mjs';

/**
 * RSS growing faster than this over the last half of the window (bytes/s) means the window ended
 * before memory settled: its maximum says nothing about a longer run. A run whose memory grew
 * without bound (lz4's buffers, 2026-11-21) rose ~20 MB/s; a settled node's samples wander by a
 * few MB either way.
 */
export const RSS_RISING_BYTES_PER_SEC = 2e6;

/** @typedef {{ p50: number, p99: number, max: number }} LoopDelay */

/**
 * @typedef {object} ServerNumbers
 * @property {'metrics endpoint' | '/proc VmRSS' | 'unavailable'} rssSource
 * @property {number | null} rssMaxBytes
 * @property {number | null} rssLastBytes
 * @property {number | null} rssTrendBytesPerSec least-squares slope of RSS over the last half of the window; null under 6 samples
 * @property {LoopDelay | null} eventLoopDelay over the window, ms; null when unavailable
 * @property {number | null} cpuCores average cores busy over the window (all threads)
 * @property {number} samples
 */

export class ServerSampler {
  /**
   * @param {object} o
   * @param {string} o.url
   * @param {string | null} o.token root token for /api/v1/metrics (null: no Authorization header)
   * @param {number | null} o.pid the server process, when it runs on this machine
   */
  constructor(o) {
    this.o = o;
    this.client = createControlClient(o.url);
    this.viaEndpoint = false;
    /** @type {number[]} */
    this.rss = [];
    /** Seconds since the window started, one per RSS sample. */
    /** @type {number[]} */
    this.rssAt = [];
    /** @type {LoopDelay | null} */
    this.loop = null;
    this.cpuStart = /** @type {number | null} */ (null);
    this.wallStart = 0;
    /** @type {Promise<void> | null} */
    this.busy = null;
    /** @type {NodeJS.Timeout | null} */
    this.timer = null;
  }

  /** Starts the window: resets the server's event-loop histogram and begins sampling each second. */
  async start() {
    this.wallStart = performance.now();
    this.cpuStart = this.o.pid === null ? null : await readCpuSeconds(this.o.pid);
    try {
      const r = await getJson(this.client, '/api/v1/metrics?reset=true', this.o.token);
      this.viaEndpoint = r.status === 200 && typeof (/** @type {any} */ (r.json)?.rss) === 'number';
    } catch {
      this.viaEndpoint = false;
    }
    this.timer = setInterval(() => {
      // A slow answer must not pile up samples.
      this.busy ??= this.sample().finally(() => (this.busy = null));
    }, 1000);
  }

  async sample() {
    if (this.viaEndpoint) {
      try {
        const r = await getJson(this.client, '/api/v1/metrics', this.o.token);
        const m = /** @type {any} */ (r.json);
        if (r.status === 200 && typeof m?.rss === 'number') {
          this.push(m.rss);
          const d = m.eventLoopDelay;
          if (d !== undefined && typeof d.p99 === 'number') this.loop = { p50: d.p50, p99: d.p99, max: d.max };
          return;
        }
      } catch {
        // fall through to /proc
      }
    }
    if (this.o.pid !== null) {
      const rss = await readVmRss(this.o.pid);
      if (rss !== null) this.push(rss);
    }
  }

  /** @param {number} rss */
  push(rss) {
    this.rss.push(rss);
    this.rssAt.push((performance.now() - this.wallStart) / 1000);
  }

  /** The slope of RSS over the last half of the samples (bytes/s), or null with fewer than 6. */
  trend() {
    if (this.rss.length < 6) return null;
    const from = Math.floor(this.rss.length / 2);
    return slope(this.rssAt.slice(from), this.rss.slice(from));
  }

  /**
   * Ends the window with a last sample.
   * @returns {Promise<ServerNumbers>}
   */
  async finish() {
    if (this.timer !== null) clearInterval(this.timer);
    if (this.busy !== null) await this.busy;
    await this.sample();
    const seconds = (performance.now() - this.wallStart) / 1000;
    const cpuEnd = this.o.pid === null ? null : await readCpuSeconds(this.o.pid);
    await this.client.close();
    return {
      rssSource: this.rss.length === 0 ? 'unavailable' : this.viaEndpoint ? 'metrics endpoint' : '/proc VmRSS',
      rssMaxBytes: this.rss.length === 0 ? null : Math.max(...this.rss),
      rssLastBytes: this.rss.length === 0 ? null : /** @type {number} */ (this.rss[this.rss.length - 1]),
      rssTrendBytesPerSec: this.trend(),
      eventLoopDelay: this.viaEndpoint ? this.loop : null,
      cpuCores: this.cpuStart === null || cpuEnd === null || seconds <= 0 ? null : (cpuEnd - this.cpuStart) / seconds,
      samples: this.rss.length,
    };
  }

  /** Stops without a result (errors, interrupts). */
  async abandon() {
    if (this.timer !== null) clearInterval(this.timer);
    await this.client.destroy();
  }
}
