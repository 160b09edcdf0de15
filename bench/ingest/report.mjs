/**
 * What a run prints and records: the header (exact command, machine, date), one block per phase,
 * the comparison of node and parse-only per dataset, and the issue's targets checked against what
 * this run measured. MB is 10^6 bytes throughout.
 */
import { cpus, loadavg, release, totalmem, type as osType } from 'node:os';
import { relative } from 'node:path';
import { RSS_RISING_BYTES_PER_SEC } from './sampler.mjs';

/** The issue's targets (2-core machine, generator included). */
export const TARGETS = Object.freeze({
  /** structured ingest events/s at least this share of the parse-only limit */
  structuredShareOfParseOnly: 0.5,
  /** acknowledgement p99 at half the maximum throughput, ms */
  ackP99Ms: 25,
  /** raw input / stored size on the access-log dataset */
  accesslogCompression: 6,
  /** server RSS at full load, bytes */
  rssBytes: 1e9,
});

/**
 * @typedef {object} PhaseResult
 * @property {string} dataset
 * @property {'parse-only' | 'node'} target
 * @property {string} url
 * @property {'closed' | 'open'} loop
 * @property {number} seconds measured window
 * @property {number} events
 * @property {number} requests
 * @property {number} eventsPerSec
 * @property {number[]} perSecondEvents acknowledged events in each second of the phase, warm-up included
 * @property {number} windowSecondMin the slowest whole second of the window, events
 * @property {number} windowSecondMax the fastest whole second of the window, events
 * @property {number} requestsPerSec
 * @property {number} rawMBps
 * @property {number} wireMBps
 * @property {number} errors in the window
 * @property {number} skipped open loop: due requests not sent (too many in flight)
 * @property {Record<string, number>} errorKinds whole phase
 * @property {string | null} firstError
 * @property {{ count: number, p50: number, p90: number, p99: number, max: number, mean: number }} latencyMs
 * @property {import('./sampler.mjs').ServerNumbers} server
 * @property {number} generatorCpuCores
 * @property {{ files: number, bytes: number, ackedRawBytes: number, ackedEvents: number, ratio: number | null, complete: boolean, stopMs: number, exit: string } | null} stored
 */

/** @param {string} s */
const shellQuote = (s) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The command as typed, relative to the working directory; tokens masked. */
export function commandLine() {
  const args = process.argv.slice(2).map((a, i, all) => (all[i - 1] === '--token' || all[i - 1] === '--admin-token' ? '<redacted>' : a));
  return ['node', relative(process.cwd(), /** @type {string} */ (process.argv[1])) || process.argv[1], ...args].map((a) => shellQuote(String(a))).join(' ');
}

export function machine() {
  const c = cpus();
  return {
    cpuModel: c[0]?.model ?? 'unknown',
    cpuCount: c.length,
    totalMemBytes: totalmem(),
    os: `${osType()} ${release()}`,
    node: process.version,
    loadAverage1m: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}

/**
 * The command that repeats this run's load against the node alone at a fixed rate.
 * @param {import('./options.mjs').BenchOptions} o
 * @param {string} dataset
 * @param {number} rate
 */
function rateCommand(o, dataset, rate) {
  const parts = ['node', relative(process.cwd(), /** @type {string} */ (process.argv[1])) || String(process.argv[1]), '--dataset', dataset, '--mode', o.mode];
  parts.push('--connections', String(o.connections), '--batch', String(o.batch), '--seconds', String(o.seconds), '--warmup', String(o.warmup), '--seed', String(o.seed));
  if (o.gzip) parts.push('--gzip');
  if (!o.attributes) parts.push('--no-attributes');
  if (o.url !== null) parts.push('--url', o.url, '--token', '<token>');
  parts.push('--target', 'node', '--rate', String(rate));
  return parts.map(shellQuote).join(' ');
}

/** @param {number} n @param {number} digits */
const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a');
/** @param {number | null} b */
const mb = (b) => (b === null ? 'n/a' : `${fmt(b / 1e6, 1)} MB`);

/**
 * @param {object} h
 * @param {string} h.command
 * @param {ReturnType<typeof machine>} h.machine
 * @param {string} h.date
 * @param {import('./options.mjs').BenchOptions} h.options
 */
export function header(h) {
  const m = h.machine;
  const o = h.options;
  return [
    'logsvc ingest benchmark',
    `  command   ${h.command}`,
    `  date      ${h.date}`,
    `  machine   ${m.cpuCount} x ${m.cpuModel}, ${fmt(m.totalMemBytes / 2 ** 30, 1)} GiB RAM, ${m.os}, node ${m.node}, load average ${m.loadAverage1m}`,
    `  load      ${o.mode}${o.mode === 'structured' && !o.attributes ? ' (raw strings only)' : ''}, ${o.connections} connections, batch ${o.batch}, ${o.gzip ? 'gzip' : 'no compression'}, ` +
      `${o.rate > 0 ? `open loop at ${fmt(o.rate)} events/s` : 'closed loop'}, warm-up ${o.warmup} s + ${o.seconds} s measured, seed ${o.seed}`,
    '',
  ].join('\n');
}

/**
 * @param {import('../lib/bodies.mjs').BodyPool} pool
 * @param {string} dataset
 */
export function poolLine(pool, dataset) {
  return (
    `[${dataset}] pre-generated ${fmt(pool.bodies.length)} bodies, ${fmt(pool.events)} events: raw ${mb(pool.rawBytes)}, bodies ${mb(pool.jsonBytes)}` +
    `${pool.gzipBytes > 0 ? `, gzip ${mb(pool.gzipBytes)} (${fmt(pool.jsonBytes / pool.gzipBytes, 1)}x)` : ''}, average raw event ${fmt(pool.rawBytes / pool.events)} B, in ${fmt(pool.buildMs / 1000, 1)} s`
  );
}

/** How far ahead the RSS target projects the window's last-half trend. */
const RSS_HORIZON_SECONDS = 60;

/**
 * RSS trend over the last half of the window, flagged when still rising.
 * @param {number | null} bytesPerSec
 */
function trendText(bytesPerSec) {
  if (bytesPerSec === null) return 'trend n/a (too few samples)';
  const t = `last-half trend ${bytesPerSec >= 0 ? '+' : ''}${fmt(bytesPerSec / 1e6, 1)} MB/s`;
  return bytesPerSec > RSS_RISING_BYTES_PER_SEC ? `${t} STILL RISING: run longer (--seconds 60) to see whether it levels off` : t;
}

/** @param {PhaseResult} r */
export function phaseBlock(r) {
  const s = r.server;
  const lines = [
    `[${r.dataset} -> ${r.target}] ${r.url}`,
    `  throughput   ${fmt(r.eventsPerSec)} events/s (1-s min ${fmt(r.windowSecondMin)}, max ${fmt(r.windowSecondMax)})   ${fmt(r.requestsPerSec, 1)} requests/s   raw ${fmt(r.rawMBps, 2)} MB/s   wire ${fmt(r.wireMBps, 2)} MB/s`,
    `  ack latency  p50 ${fmt(r.latencyMs.p50, 2)} ms   p90 ${fmt(r.latencyMs.p90, 2)} ms   p99 ${fmt(r.latencyMs.p99, 2)} ms   max ${fmt(r.latencyMs.max, 2)} ms   (${fmt(r.latencyMs.count)} requests${r.loop === 'open' ? ', from due time' : ''}${r.latencyMs.count < 1000 ? '; under 1,000 samples, p99 is close to the max' : ''})`,
    `  server       RSS max ${mb(s.rssMaxBytes)} (${s.rssSource}), ${trendText(s.rssTrendBytesPerSec)}   event-loop delay ${
      s.eventLoopDelay === null ? 'unavailable' : `p50 ${fmt(s.eventLoopDelay.p50, 2)} p99 ${fmt(s.eventLoopDelay.p99, 2)} max ${fmt(s.eventLoopDelay.max, 2)} ms`
    }   CPU ${s.cpuCores === null ? 'n/a' : `${fmt(s.cpuCores, 2)} cores`}`,
    `  generator    CPU ${fmt(r.generatorCpuCores, 2)} cores`,
  ];
  if (r.errors > 0 || r.skipped > 0 || Object.keys(r.errorKinds).length > 0) {
    lines.push(`  errors       ${fmt(r.errors)} in window, skipped ${fmt(r.skipped)}; whole phase: ${JSON.stringify(r.errorKinds)}; first: ${r.firstError ?? ''}`);
  }
  if (r.stored !== null) {
    const st = r.stored;
    lines.push(
      `  stored       ${mb(st.bytes)} in ${st.files} segment files for ${fmt(st.ackedEvents)} acknowledged events, raw ${mb(st.ackedRawBytes)}: raw/stored ${st.ratio === null ? 'n/a' : `${fmt(st.ratio, 2)}x`}` +
        `${st.complete ? '' : '  (INCOMPLETE: the node did not stop cleanly)'}   (stop ${fmt(st.stopMs / 1000, 1)} s, ${st.exit})`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The per-dataset comparison and the targets.
 * @param {PhaseResult[]} results
 * @param {import('./options.mjs').BenchOptions} o
 * @returns {{ text: string, checks: { name: string, status: 'pass' | 'FAIL' | 'not measured', detail: string }[] }}
 */
export function summary(results, o) {
  const lines = ['summary', '  dataset     parse-only ev/s     node ev/s   node/parse-only   node p99 ms   node RSS max   raw/stored'];
  /** @type {{ name: string, status: 'pass' | 'FAIL' | 'not measured', detail: string }[]} */
  const checks = [];
  /** @param {string} name @param {boolean | null} ok @param {string} detail */
  const check = (name, ok, detail) => checks.push({ name, status: ok === null ? 'not measured' : ok ? 'pass' : 'FAIL', detail });

  for (const ds of o.datasets) {
    const po = results.find((r) => r.dataset === ds && r.target === 'parse-only');
    const nd = results.find((r) => r.dataset === ds && r.target === 'node');
    const share = po !== undefined && nd !== undefined && po.eventsPerSec > 0 ? nd.eventsPerSec / po.eventsPerSec : null;
    lines.push(
      `  ${ds.padEnd(10)} ${(po === undefined ? '-' : fmt(po.eventsPerSec)).padStart(16)} ${(nd === undefined ? '-' : fmt(nd.eventsPerSec)).padStart(13)} ` +
        `${(share === null ? '-' : `${fmt(share * 100, 1)} %`).padStart(17)} ${(nd === undefined ? '-' : fmt(nd.latencyMs.p99, 2)).padStart(13)} ` +
        `${(nd === undefined ? '-' : mb(nd.server.rssMaxBytes)).padStart(14)} ${(nd?.stored?.ratio == null ? '-' : `${fmt(nd.stored.ratio, 2)}x`).padStart(12)}`,
    );
    if (nd === undefined) continue;
    if (o.mode === 'structured' && o.rate === 0) {
      check(`${ds}: structured ingest >= ${TARGETS.structuredShareOfParseOnly * 100}% of parse-only`, share === null ? null : share >= TARGETS.structuredShareOfParseOnly, share === null ? 'needs --target both' : `${fmt(share * 100, 1)} %`);
    }
    if (o.rate > 0) {
      check(`${ds}: ack p99 <= ${TARGETS.ackP99Ms} ms at ${fmt(o.rate)} events/s`, nd.latencyMs.count === 0 ? null : nd.latencyMs.p99 <= TARGETS.ackP99Ms, `p99 ${fmt(nd.latencyMs.p99, 2)} ms (valid for the target only if ${fmt(o.rate)} is half the measured maximum)`);
    }
    if (o.rate === 0) {
      const rss = nd.server.rssMaxBytes;
      const trend = nd.server.rssTrendBytesPerSec ?? 0;
      // Under the limit but rising fast enough to cross it within a minute is no pass.
      const crossing = rss !== null && rss <= TARGETS.rssBytes && rss + trend * RSS_HORIZON_SECONDS > TARGETS.rssBytes;
      check(
        `${ds}: server RSS <= ${fmt(TARGETS.rssBytes / 1e6)} MB at full load`,
        rss === null || crossing ? null : rss <= TARGETS.rssBytes,
        `${mb(rss)}${crossing ? `, but rising ${fmt(trend / 1e6, 1)} MB/s over the last half of the window: past the limit within ${RSS_HORIZON_SECONDS} s at that rate; run longer` : ''}`,
      );
    }
    if (ds === 'accesslog') {
      const st = nd.stored;
      check(`accesslog: stored at least ${TARGETS.accesslogCompression}x smaller than raw`, st === null || st.ratio === null || !st.complete ? null : st.ratio >= TARGETS.accesslogCompression, st?.ratio == null ? 'needs a spawned node' : `${fmt(st.ratio, 2)}x`);
    }
  }
  lines.push('', 'targets (this run)');
  if (checks.length === 0) lines.push('  none: the targets are about the node, and this run had no node phase');
  for (const c of checks) lines.push(`  ${c.status.padEnd(12)} ${c.name}: ${c.detail}`);
  if (o.rate === 0) {
    for (const r of results) {
      if (r.target !== 'node' || r.eventsPerSec <= 0) continue;
      lines.push(`  next: p99 at half this maximum: ${rateCommand(o, r.dataset, Math.round(r.eventsPerSec / 2))}`);
    }
  }
  return { text: `${lines.join('\n')}\n`, checks };
}
