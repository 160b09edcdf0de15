#!/usr/bin/env node
/**
 * The ingest benchmark: for each dataset, pre-generate a pool of request bodies, then drive the same
 * load against the parse-only uWebSockets.js server (the machine's limit) and a logsvc node (spawned
 * with a fresh data dir, or a running one via --url), and report throughput, acknowledgement
 * latency, server RSS / event-loop delay / CPU and, for a spawned node, the stored size after a clean
 * stop. Everything binds 127.0.0.1; every phase is bounded in time; every process and temp dir this
 * run starts is removed at the end, on Ctrl-C and on errors. `--help` lists the options.
 */
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { buildBodyPool } from '../lib/bodies.mjs';
import { createControlClient, createLoadPool, graphql } from '../lib/http.mjs';
import { keepTempDir, makeTempDir, readCpuSeconds, readVmRss, removeTempDir, startLogsvcNode, startParseOnly, storedSegmentBytes } from '../lib/processes.mjs';
import { percentile, summarize } from '../lib/stats.mjs';
import { progressLine } from '../lib/plot.mjs';
import { ingestReport } from './plots.mjs';
import { LoadRun } from './load.mjs';
import { HELP, parseOptions } from './options.mjs';
import { runWithin, startRun } from '../lib/cli.mjs';
import { commandLine, header, machine, phaseBlock, poolLine, summary } from './report.mjs';
import { ServerSampler } from './sampler.mjs';

/** The spawned node's config: blocks reach segments within the run instead of after 30 minutes. */
const NODE_CONFIG = `# written by bench/ingest/run.mjs
[digest]
flush_block_seconds = 5
`;
/** Upper bound on pre-generated body bytes per dataset, whatever --pool-events asks. */
const MAX_POOL_BYTES = 256e6;
/** A node gets this long to drain open blocks into segments after SIGTERM. */
const NODE_STOP_TIMEOUT_MS = 120_000;
/** Fixed costs per phase on top of warm-up and window: starts, stops, drains, pool building. */
const PHASE_OVERHEAD_MS = 240_000;

/** @typedef {import('./options.mjs').BenchOptions} BenchOptions */
/** @typedef {import('./report.mjs').PhaseResult} PhaseResult */
/** @typedef {import('../lib/bodies.mjs').BodyPool} BodyPool */

const log = (/** @type {string} */ s) => process.stdout.write(`${s}\n`);
const progress = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);

/**
 * Drives one phase's load and samples the server meanwhile.
 * @param {object} p
 * @param {BenchOptions} p.o
 * @param {string} p.dataset
 * @param {'parse-only' | 'node'} p.target
 * @param {string} p.url
 * @param {Record<string, string>} p.headers
 * @param {BodyPool} p.pool
 * @param {string | null} p.metricsToken
 * @param {number | null} p.pid
 * @returns {Promise<Omit<PhaseResult, 'stored'> & { ackedEvents: number, ackedRawBytes: number }>}
 */
async function drive(p) {
  const { o } = p;
  const http = createLoadPool(p.url, o.connections);
  const load = new LoadRun({
    pool: http,
    path: p.pool.path,
    headers: o.gzip ? { ...p.headers, 'content-encoding': 'gzip' } : p.headers,
    bodies: p.pool.bodies,
    gzip: o.gzip,
    connections: o.connections,
    warmupMs: o.warmup * 1000,
    measureMs: o.seconds * 1000,
    rate: o.rate,
    batch: o.batch,
  });
  const sampler = new ServerSampler({ url: p.url, token: p.metricsToken, pid: p.pid });
  const label = `[${p.dataset} -> ${p.target}]`;
  let lastEvents = 0;
  let tick = 0;
  /** @type {number[]} acknowledged events in each second since the load began, warm-up included */
  const perSecond = [];
  /** @type {import('./plots.mjs').Second[]} one point a second for the report's plots */
  const timeline = [];
  let lastCpu = p.pid === null ? null : await readCpuSeconds(p.pid);
  const ticker = setInterval(() => {
    tick++;
    const events = load.progressEvents - lastEvents;
    perSecond.push(events);
    const lat = Float64Array.from(load.recentLatency.splice(0)).sort();
    const point = { t: tick, events, p50: lat.length === 0 ? null : percentile(lat, 50), p99: lat.length === 0 ? null : percentile(lat, 99), cpuCores: /** @type {number | null} */ (null), rssBytes: /** @type {number | null} */ (null) };
    timeline.push(point);
    const phase = tick <= o.warmup ? 'warm-up' : 'measure';
    progress(progressLine({ label, elapsedSec: tick, phase, rate: events, unit: 'events/s', p99Ms: point.p99, extra: `in flight ${load.inFlight}  errors ${load.allErrors}` }));
    lastEvents = load.progressEvents;
    // The server's CPU and RSS for this second (only for a process on this machine).
    if (p.pid !== null) {
      const pid = p.pid;
      void Promise.all([readCpuSeconds(pid), readVmRss(pid)]).then(([cpu, rss]) => {
        if (cpu !== null && lastCpu !== null) point.cpuCores = cpu - lastCpu;
        lastCpu = cpu;
        point.rssBytes = rss;
      });
    }
  }, 1000);
  try {
    const running = load.run();
    // The window starts after the warm-up; its CPU and the server's numbers are taken from there.
    await new Promise((r) => setTimeout(r, o.warmup * 1000));
    const cpu0 = process.cpuUsage();
    const wall0 = performance.now();
    await sampler.start();
    await new Promise((r) => setTimeout(r, Math.max(0, load.end - performance.now())));
    const cpu = process.cpuUsage(cpu0);
    const wall = (performance.now() - wall0) / 1000;
    const server = await sampler.finish();
    await running;
    const secs = o.seconds;
    // Whole seconds inside the window: how steady the rate was, not just its average.
    const steady = perSecond.slice(Math.ceil(o.warmup), Math.floor(o.warmup + o.seconds));
    return {
      dataset: p.dataset,
      target: p.target,
      url: p.url,
      loop: o.rate > 0 ? 'open' : 'closed',
      seconds: secs,
      events: load.events,
      requests: load.requests,
      eventsPerSec: load.events / secs,
      perSecondEvents: perSecond,
      timeline,
      windowSecondMin: steady.length === 0 ? Number.NaN : Math.min(...steady),
      windowSecondMax: steady.length === 0 ? Number.NaN : Math.max(...steady),
      requestsPerSec: load.requests / secs,
      rawMBps: load.rawBytes / 1e6 / secs,
      wireMBps: load.wireBytes / 1e6 / secs,
      errors: load.errors,
      skipped: load.skipped,
      errorKinds: Object.fromEntries(load.errorKinds),
      firstError: load.firstError,
      latencyMs: summarize(load.latency),
      server,
      generatorCpuCores: (cpu.user + cpu.system) / 1e6 / wall,
      ackedEvents: load.ackedEvents,
      ackedRawBytes: load.ackedRawBytes,
    };
  } catch (err) {
    await sampler.abandon();
    throw err;
  } finally {
    clearInterval(ticker);
    await http.destroy();
  }
}

/**
 * @param {BenchOptions} o
 * @param {string} dataset
 * @param {BodyPool} pool
 * @returns {Promise<PhaseResult>}
 */
async function parseOnlyPhase(o, dataset, pool) {
  const server = await startParseOnly();
  try {
    const r = await drive({ o, dataset, target: 'parse-only', url: server.url, headers: { 'content-type': 'application/json' }, pool, metricsToken: null, pid: server.pid });
    const { ackedEvents: _e, ackedRawBytes: _b, ...rest } = r;
    return { ...rest, stored: null };
  } finally {
    await server.stop(5_000);
  }
}

/**
 * @param {BenchOptions} o
 * @param {string} dataset
 * @param {BodyPool} pool
 * @returns {Promise<PhaseResult>}
 */
async function nodePhase(o, dataset, pool) {
  if (o.url !== null) {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${o.token}` };
    const r = await drive({ o, dataset, target: 'node', url: o.url, headers, pool, metricsToken: o.adminToken, pid: null });
    const { ackedEvents: _e, ackedRawBytes: _b, ...rest } = r;
    return { ...rest, stored: null };
  }
  const root = await makeTempDir(`logsvc-bench-${dataset}-`);
  try {
    const nodeFlags = [];
    if (o.cpuProf !== null) {
      await mkdir(o.cpuProf, { recursive: true });
      nodeFlags.push('--cpu-prof', `--cpu-prof-dir=${resolve(o.cpuProf)}`);
    }
    const config = o.nodeConfig === null ? NODE_CONFIG : `${NODE_CONFIG}\n${await readFile(o.nodeConfig, 'utf8')}`;
    const { server, dataDir, adminToken } = await startLogsvcNode({ rootDir: root, config, nodeFlags });
    let r;
    try {
      const control = createControlClient(server.url);
      let ingestToken;
      try {
        const data = await graphql(control, adminToken, 'mutation { createRepository(name: "bench") { repository { ingestTokens { token } } } }');
        ingestToken = data?.createRepository?.repository?.ingestTokens?.[0]?.token;
        if (typeof ingestToken !== 'string') throw new Error(`createRepository returned no ingest token: ${JSON.stringify(data).slice(0, 300)}`);
      } finally {
        await control.close();
      }
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${ingestToken}` };
      r = await drive({ o, dataset, target: 'node', url: server.url, headers, pool, metricsToken: adminToken, pid: server.pid });
    } catch (err) {
      await server.stop(5_000);
      throw err;
    }
    progress(`[${dataset} -> node] stopping the node (SIGTERM; open blocks are written to segments)`);
    const stop = await server.stop(NODE_STOP_TIMEOUT_MS);
    const seg = await storedSegmentBytes(dataDir);
    const clean = !stop.killed && stop.code === 0;
    if (!clean) progress(`[${dataset} -> node] the node did not stop cleanly (${JSON.stringify(stop)}); stderr tail:\n${server.stderr.slice(-4000)}`);
    const { ackedEvents, ackedRawBytes, ...rest } = r;
    return {
      ...rest,
      stored: {
        files: seg.files,
        bytes: seg.bytes,
        ackedEvents,
        ackedRawBytes,
        ratio: seg.bytes > 0 ? ackedRawBytes / seg.bytes : null,
        complete: clean,
        stopMs: stop.ms,
        exit: stop.killed ? 'killed after timeout' : `exit code ${stop.code}${stop.signal === null ? '' : `, signal ${stop.signal}`}`,
      },
    };
  } finally {
    if (o.keepData) {
      keepTempDir(root);
      progress(`[${dataset} -> node] kept the node's data dir: ${root}/data`);
    } else {
      await removeTempDir(root);
    }
  }
}

/** @param {BenchOptions} o */
async function main(o) {
  const date = new Date().toISOString();
  const command = commandLine();
  const mach = machine();
  log(header({ command, machine: mach, date, options: o }));

  /** @type {PhaseResult[]} */
  const results = [];
  for (const dataset of o.datasets) {
    const pool = buildBodyPool({
      dataset,
      mode: o.mode,
      seed: o.seed,
      batch: o.batch,
      poolEvents: o.poolEvents,
      minBodies: 2 * o.connections,
      maxPoolBytes: MAX_POOL_BYTES,
      gzip: o.gzip,
      attributes: o.attributes,
    });
    log(poolLine(pool, dataset));
    for (const target of o.targets) {
      const r = target === 'parse-only' ? await parseOnlyPhase(o, dataset, pool) : await nodePhase(o, dataset, pool);
      results.push(r);
      log(phaseBlock(r));
    }
  }
  const sum = summary(results, o);
  log(sum.text);
  const reportFile = o.report ?? `bench/reports/ingest-${date.replace(/[:.]/g, '-')}.html`;
  await mkdir(dirname(resolve(reportFile)), { recursive: true });
  await writeFile(reportFile, ingestReport({ date, command, machine: mach, results, summaryText: sum.text }));
  log(`report with plots: ${reportFile}`);
  if (o.out !== null) {
    const recorded = { ...o, token: o.token === null ? null : '<redacted>', adminToken: o.adminToken === null ? null : '<redacted>' };
    await appendFile(o.out, `${JSON.stringify({ date, command, machine: mach, options: recorded, results, targets: sum.checks })}\n`);
    log(`result appended to ${o.out}`);
  }
}

const { options, abort } = startRun(parseOptions(process.argv.slice(2)), HELP);
const phases = options.datasets.length * options.targets.length;
const budgetMs = phases * ((options.warmup + options.seconds) * 1000 + PHASE_OVERHEAD_MS);
await runWithin(abort, budgetMs, `${Math.round(budgetMs / 1000)} s`, () => main(options));
