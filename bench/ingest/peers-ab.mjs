#!/usr/bin/env node
/**
 * Ingest of the peers corpus (bench/peers: the same bodies, batch size and load program as the
 * peers run) into a fresh logsvc node of this build and of another, alternated run by run (A B,
 * then B A, ...), for a side-by-side figure on a shared machine where one run's rate swings with
 * the disk and the neighbours. Each run: a new node on a temp data dir, the disk's fsync latency
 * there (bench/lib/disk.mjs), --warmup bodies sent, then the first --bodies bodies (the measured
 * part) --connections at a time, then the
 * node stopped by its PID. Reports events/s, server CPU per million events, acknowledgement
 * latency (p50/p90/p99) and the load average of every run, and the medians per side.
 *
 *   node bench/ingest/peers-ab.mjs --dataset accesslog --runs 4 --against /work/base
 *   node bench/ingest/peers-ab.mjs --control        (this build on both sides: the A/A noise)
 */
import { existsSync } from 'node:fs';
import { homedir, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { describeBuild, distBuild, staleDist } from '../lib/build.mjs';
import { numberOption, runWithin, startRun } from '../lib/cli.mjs';
import { fsyncProbe } from '../lib/disk.mjs';
import { createControlClient, createLoadPool, graphql } from '../lib/http.mjs';
import { LOGSVC_BIN, makeTempDir, readCpuSeconds, removeTempDir, startLogsvcNode } from '../lib/processes.mjs';
import { NODE_CONFIG, load, median } from '../peers/session.mjs';

const HELP = `node bench/ingest/peers-ab.mjs [options]
  --dataset NAME      accesslog or json (default accesslog)
  --events N          the corpus file's size, as bench/peers names it (default 1000000; run
                      bench/peers/run.mjs or ask.mjs once to make it)
  --bodies N          bodies (of 1000 events) sent per run (default 1000)
  --warmup N          bodies sent before the measured ones, not measured (default 20: the
                      first requests of a new node start its worker threads)
  --connections N     concurrent requests (default 4, as bench/peers)
  --runs N            runs per side, alternated (default 4)
  --against DIR       the other build: a checkout holding bin/logsvc and dist/ (e.g. /work/base)
  --control           this build on both sides (A/A: the noise between runs)
  --b-env NAME=VALUE  an environment variable for side B's node only (with --control: a
                      setting's A/B on one build, e.g. UV_THREADPOOL_SIZE=16)
  --b-config S.K=V    one setting for side B's node only (in the section of the peers config,
                      or a new one), e.g. ingest.offload_bytes=1048576
  --allow-stale       run even when a build's dist/ is older than its source or commit
`;

const { values: v } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'accesslog' },
    events: { type: 'string', default: '1000000' },
    bodies: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '20' },
    connections: { type: 'string', default: '4' },
    runs: { type: 'string', default: '4' },
    against: { type: 'string' },
    control: { type: 'boolean', default: false },
    'b-env': { type: 'string' },
    'b-config': { type: 'string' },
    'allow-stale': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

/** @type {string[]} */
const problems = [];
const num = numberOption(problems);
const dataset = v.dataset === 'json' || v.dataset === 'accesslog' ? v.dataset : (problems.push(`--dataset: accesslog or json, got "${v.dataset}"`), 'accesslog');
const file = join(homedir(), '.cache', 'logsvc', 'peers-corpus', `v1-${dataset}-${v.events}-1000-1.logsvc.bodies`);
if (!existsSync(file)) problems.push(`${file} is missing: run bench/peers/run.mjs once with --${dataset === 'json' ? 'json' : 'access'} ${v.events}`);
if (v.against === undefined && !v.control) problems.push('give --against DIR or --control');
if (v.against !== undefined && v.control) problems.push('--against and --control exclude each other');
const here = resolve(new URL('../..', import.meta.url).pathname);
const other = v.control ? here : resolve(v.against ?? here);
if (!existsSync(join(other, 'bin', 'logsvc'))) problems.push(`${other}/bin/logsvc does not exist`);
const bEnv = v['b-env'] === undefined ? null : /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(v['b-env']);
if (v['b-env'] !== undefined && bEnv === null) problems.push(`--b-env: NAME=VALUE, got "${v['b-env']}"`);
const bConfig = v['b-config'] === undefined ? null : /^([a-z_]+)\.([a-z_]+)=(.+)$/.exec(v['b-config']);
if (v['b-config'] !== undefined && bConfig === null) problems.push(`--b-config: SECTION.KEY=VALUE, got "${v['b-config']}"`);
/** The peers run's node config with side B's setting put in its section. */
const configB = () => {
  if (bConfig === null) return NODE_CONFIG;
  const [, section, key, value] = bConfig;
  const header = `[${section}]\n`;
  return NODE_CONFIG.includes(header) ? NODE_CONFIG.replace(header, `${header}${key} = ${value}\n`) : `${NODE_CONFIG}\n${header}${key} = ${value}\n`;
};
const o = {
  bodies: num('bodies', v.bodies ?? '1000', 1, 100_000, true),
  warmup: num('warmup', v.warmup ?? '20', 0, 100_000, true),
  connections: num('connections', v.connections ?? '4', 1, 256, true),
  runs: num('runs', v.runs ?? '4', 1, 50, true),
};
const { abort } = startRun(problems.length > 0 ? { help: v.help ?? false, problems } : v.help ? { help: true } : { help: false, options: o }, HELP);
const log = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);

/** @param {number[]} xs @param {number} q */
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return /** @type {number} */ (s[Math.min(s.length - 1, Math.floor(q * s.length))]);
};

/**
 * One run: a fresh node of `bin`, the fsync probe in its data dir, the bodies sent, the node stopped.
 * @param {string} bin
 * @param {RegExpExecArray | null} env a variable for this node (children inherit this process's environment)
 * @param {string} config the node's config file
 */
async function runOnce(bin, env, config) {
  const root = await makeTempDir('logsvc-peers-ab-');
  const saved = env === null ? undefined : process.env[/** @type {string} */ (env[1])];
  if (env !== null) process.env[/** @type {string} */ (env[1])] = env[2];
  const node = await startLogsvcNode({ rootDir: root, config, nodeFlags: [], bin }).finally(() => {
    if (env === null) return;
    if (saved === undefined) delete process.env[/** @type {string} */ (env[1])];
    else process.env[/** @type {string} */ (env[1])] = saved;
  });
  const control = createControlClient(node.server.url);
  try {
    const disk = await fsyncProbe(node.dataDir);
    const made = await graphql(control, node.adminToken, 'mutation { createRepository(name: "ab") { repository { ingestTokens { token } } } }');
    const token = made.createRepository.repository.ingestTokens[0].token;
    const pool = createLoadPool(node.server.url, o.connections);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    if (o.warmup > 0) await load(pool, '/api/v1/ingest/service-structured', headers, file, node.server.pid, 0, o.connections, { maxBodies: o.warmup });
    /** @type {number[]} */
    const latencies = [];
    const load1 = loadavg()[0] ?? 0;
    const r = await load(pool, '/api/v1/ingest/service-structured', headers, file, node.server.pid, 0, o.connections, { maxBodies: o.bodies, latencies });
    const cpu = (await readCpuSeconds(node.server.pid)) - r.cpu0;
    await pool.close();
    const events = r.bodies * 1000;
    return { eventsPerS: events / r.seconds, cpuPerM: (cpu / events) * 1e6, p50: quantile(latencies, 0.5), p90: quantile(latencies, 0.9), p99: quantile(latencies, 0.99), fsyncP50: disk.p50Ms, fsyncP90: disk.p90Ms, load1, retries: r.retries };
  } finally {
    await control.close();
    await node.server.stop(120_000);
    await removeTempDir(root);
  }
}

await runWithin(abort, 60 * 60_000, '60 minutes', async () => {
  log(`node bench/ingest/peers-ab.mjs ${process.argv.slice(2).join(' ')}`);
  if (!v['allow-stale']) {
    for (const dir of new Set([here, other])) {
      const stale = await staleDist(dir);
      if (stale !== null) throw new Error(`${stale} (--allow-stale runs anyway)`);
    }
  }
  log(`A: ${here}: ${describeBuild(await distBuild())}`);
  log(`B: ${other}${v.control ? ' (control: the same build)' : ''}${bEnv === null ? '' : ` with ${bEnv[0]}`}${v['b-config'] === undefined ? '' : ` with config ${JSON.stringify(v['b-config'])}`}`);
  log(`${dataset}: ${o.bodies} bodies of 1000 events (after ${o.warmup} not measured) from ${file}, ${o.connections} at a time`);
  /** @type {Record<'A' | 'B', Awaited<ReturnType<typeof runOnce>>[]>} */
  const runs = { A: [], B: [] };
  const f = (/** @type {number} */ x, /** @type {number} */ d = 1) => x.toFixed(d);
  for (let i = 0; i < o.runs; i++) {
    for (const side of /** @type {('A' | 'B')[]} */ (i % 2 === 0 ? ['A', 'B'] : ['B', 'A'])) {
      const r = side === 'A' ? await runOnce(LOGSVC_BIN, null, NODE_CONFIG) : await runOnce(join(other, 'bin', 'logsvc'), bEnv, configB());
      runs[side].push(r);
      log(`run ${i + 1} ${side}: ${f(r.eventsPerS / 1000)}k events/s, ${f(r.cpuPerM, 2)} s CPU per M events, ack p50/p90/p99 ${f(r.p50)}/${f(r.p90)}/${f(r.p99)} ms, fsync probe p50/p90 ${f(r.fsyncP50)}/${f(r.fsyncP90)} ms, load ${f(r.load1, 2)}${r.retries > 0 ? `, ${r.retries} retries` : ''}`);
    }
  }
  for (const side of /** @type {('A' | 'B')[]} */ (['A', 'B'])) {
    const rs = runs[side];
    const m = (/** @type {(r: (typeof rs)[number]) => number} */ pick) => /** @type {number} */ (median(rs.map(pick)));
    log(`median ${side}: ${f(m((r) => r.eventsPerS) / 1000)}k events/s, ${f(m((r) => r.cpuPerM), 2)} s CPU per M events, ack p50 ${f(m((r) => r.p50))} ms, p90 ${f(m((r) => r.p90))} ms, p99 ${f(m((r) => r.p99))} ms`);
  }
  const ratio = /** @type {number} */ (median(runs.A.map((r) => r.eventsPerS))) / /** @type {number} */ (median(runs.B.map((r) => r.eventsPerS)));
  log(`A/B events/s (medians): ${ratio.toFixed(3)}`);
});
