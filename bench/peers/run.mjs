#!/usr/bin/env node
/**
 * logsvc against VictoriaLogs, side by side in one run on one machine: the same generated events in
 * the same batches sent by the same load program (logsvc's structured endpoint; VictoriaLogs'
 * /insert/jsonline), the same questions asked in each one's language, every answer compared, and
 * the ratios: ingest events/s and CPU per million events, stored bytes, whole data dir, RSS (idle
 * empty, after ingest, idle after a restart with data), and per question the median latency and
 * server CPU of the timed runs after a warm-up.
 *
 *   node bench/peers/run.mjs [--access 3000000] [--json 1000000] [--quick] [--out-json F] [--out-md F]
 *
 * Both servers bind 127.0.0.1, use temp data dirs, and are stopped by PID at the end (or on Ctrl-C,
 * an error or the time budget).
 */
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { cpus, homedir, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { describeBuild, distBuild, staleDist } from '../lib/build.mjs';
import { runWithin, startRun } from '../lib/cli.mjs';
import { waitDigested } from '../lib/digest.mjs';
import { fsyncProbe } from '../lib/disk.mjs';
import { createControlClient, createLoadPool, graphql } from '../lib/http.mjs';
import { makeTempDir, readCpuSeconds, readVmRss, startLogsvcNode, storedSegmentBytes } from '../lib/processes.mjs';
import { compareAnswers } from './compare.mjs';
import { ensureCorpus } from './corpus.mjs';
import { ACCESS_QUESTIONS, JSON_QUESTIONS } from './questions.mjs';
import { markdown } from './report.mjs';
import { NODE_CONFIG, load, median, timeQuestion } from './session.mjs';
import { DEFAULT_VL_BIN, VL_INSERT_PATH, VL_VERSION, ensureBinary, forceFlush, startVictoriaLogs, tenantHeaders } from './victorialogs.mjs';

const HELP = `node bench/peers/run.mjs [options]
  --access N          access-log events (default 3000000)
  --json N            JSON events (default 1000000)
  --quick             300000 access-log and 100000 JSON events (a smaller run)
  --skip-questions    ingest, footprint and RSS only
  --long-idle N       also read idle RSS after N s without requests (default 60; 0: not), as
                      well as after 5 s: V8 gives memory back only after a while idle
  --batch N           events per request (default 1000)
  --connections N     concurrent requests of the load program (default 4)
  --repeat N          timed runs per question after one warm-up (default 5)
  --seed N            dataset seed (default 1)
  --only LIST         question ids to ask (default all), e.g. count,histogram
  --vl-bin PATH       the VictoriaLogs binary (default ${DEFAULT_VL_BIN}; built with go install if absent)
  --cache-dir DIR     where generated bodies are kept (default ~/.cache/logsvc/peers-corpus)
  --node-config FILE  extra TOML appended to the logsvc node's config
  --out-json FILE     write the result document (default bench/reports/peers-<date>.json)
  --out-md FILE       write the markdown tables (default bench/reports/peers-<date>.md)
  --budget-minutes N  the whole run's time budget (default 120)
  --allow-stale       run even when the logsvc build's dist/ is older than its source or commit
`;

const { values: v } = parseArgs({
  options: {
    access: { type: 'string', default: '3000000' },
    json: { type: 'string', default: '1000000' },
    quick: { type: 'boolean', default: false },
    'skip-questions': { type: 'boolean', default: false },
    'long-idle': { type: 'string', default: '60' },
    batch: { type: 'string', default: '1000' },
    connections: { type: 'string', default: '4' },
    repeat: { type: 'string', default: '5' },
    seed: { type: 'string', default: '1' },
    only: { type: 'string', default: '' },
    'vl-bin': { type: 'string', default: DEFAULT_VL_BIN },
    'cache-dir': { type: 'string', default: join(homedir(), '.cache', 'logsvc', 'peers-corpus') },
    'node-config': { type: 'string' },
    'out-json': { type: 'string' },
    'out-md': { type: 'string' },
    'budget-minutes': { type: 'string', default: '120' },
    'allow-stale': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
/** @type {string[]} */
const problems = [];
/** @param {string} name @param {number} min @param {number} max */
const int = (name, min, max) => {
  const n = Number(v[/** @type {keyof typeof v} */ (name)]);
  if (!Number.isInteger(n) || n < min || n > max) problems.push(`--${name}: an integer from ${min} to ${max}`);
  return n;
};
const date = new Date().toISOString().slice(0, 19).replace(/:/g, '-');
const o = {
  access: v.quick ? 300_000 : int('access', 1000, 50_000_000),
  json: v.quick ? 100_000 : int('json', 1000, 20_000_000),
  batch: int('batch', 1, 100_000),
  connections: int('connections', 1, 64),
  repeat: int('repeat', 1, 100),
  skipQuestions: v['skip-questions'] === true,
  longIdleSeconds: int('long-idle', 0, 3600),
  seed: int('seed', 0, 2 ** 31),
  only: String(v.only).split(',').filter((s) => s !== ''),
  vlBin: String(v['vl-bin']),
  cacheDir: String(v['cache-dir']),
  nodeConfig: v['node-config'] ?? null,
  outJson: v['out-json'] ?? join('bench', 'reports', `peers-${date}.json`),
  outMd: v['out-md'] ?? join('bench', 'reports', `peers-${date}.md`),
  budgetMinutes: int('budget-minutes', 1, 24 * 60),
};
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
// A stale dist/ would be measured under the new code's name.
const stale = v['allow-stale'] === true ? null : await staleDist(REPO_ROOT);
if (stale !== null) problems.push(`${stale} (or pass --allow-stale)`);
const { abort } = startRun(v.help ? { help: true } : problems.length > 0 ? { help: false, problems } : { help: false, options: o }, HELP);
const log = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);

const STOP_TIMEOUT_MS = 120_000;
/** Idle time before an RSS reading. */
const IDLE_MS = 5_000;

/**
 * Bytes a directory tree holds on disk (allocated blocks, as du counts) and its apparent size.
 * @param {string} dir
 * @returns {Promise<{ allocated: number, apparent: number }>}
 */
async function dirBytes(dir) {
  let allocated = 0;
  let apparent = 0;
  /** @param {string} d */
  const walk = async (d) => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) {
        try {
          const s = await stat(p);
          allocated += s.blocks * 512;
          apparent += s.size;
        } catch {
          // removed meanwhile
        }
      }
    }
  };
  await walk(dir);
  return { allocated, apparent };
}

/** Waits until a directory's size has not changed for `quietMs` (merges, checkpoints, reclaim), at most `maxMs`. */
async function settle(/** @type {string} */ dir, quietMs, maxMs) {
  const t0 = performance.now();
  let last = -1;
  let since = performance.now();
  for (;;) {
    const { allocated } = await dirBytes(dir);
    if (allocated !== last) {
      last = allocated;
      since = performance.now();
    }
    if (performance.now() - since >= quietMs || performance.now() - t0 >= maxMs) return last;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

await runWithin(abort, o.budgetMinutes * 60_000, `${o.budgetMinutes} minutes`, async () => {
  const command = `node bench/peers/run.mjs ${process.argv.slice(2).join(' ')}`.trim();
  const machine = `${cpus().length} x ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`;
  const logsvcVersion = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')).version;
  log(command);
  const logsvcBuild = describeBuild(await distBuild());
  log(`machine: ${machine}`);
  log(`logsvc ${logsvcVersion}: ${logsvcBuild}`);

  const corpora = {
    accesslog: ensureCorpus({ dataset: 'accesslog', events: o.access, batch: o.batch, seed: o.seed, cacheDir: o.cacheDir, progress: log }),
    json: ensureCorpus({ dataset: 'json', events: o.json, batch: o.batch, seed: o.seed, cacheDir: o.cacheDir, progress: log }),
  };
  const vlBin = ensureBinary(o.vlBin, log);

  const root = await makeTempDir('logsvc-bench-peers-');
  const vlDir = join(root, 'vl-data');
  const nodeConfig = o.nodeConfig === null ? NODE_CONFIG : `${NODE_CONFIG}\n${await readFile(o.nodeConfig, 'utf8')}`;

  // --- Start both, idle and empty.
  let node = await startLogsvcNode({ rootDir: root, config: nodeConfig, nodeFlags: [] });
  let vl = await startVictoriaLogs(vlBin, vlDir);
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const footprint = {
    logsvc: { rssEmpty: await readVmRss(node.server.pid), storedBytes: 0, dirBytes: 0, dirApparentBytes: 0, rssAfterIngest: /** @type {number | null} */ (null), rssAfterRestart: /** @type {number | null} */ (null), rssAfterQueries: /** @type {number | null} */ (null) },
    vl: { rssEmpty: await readVmRss(vl.pid), storedBytes: 0, dirBytes: 0, dirApparentBytes: 0, rssAfterIngest: /** @type {number | null} */ (null), rssAfterRestart: /** @type {number | null} */ (null), rssAfterQueries: /** @type {number | null} */ (null) },
  };
  log(`[idle] RSS empty: logsvc ${((footprint.logsvc.rssEmpty ?? 0) / 1e6).toFixed(1)} MB, VictoriaLogs ${((footprint.vl.rssEmpty ?? 0) / 1e6).toFixed(1)} MB`);
  await longIdle('rssEmptyLongIdle', node.server.pid, vl.pid);

  /**
   * RSS of both after `--long-idle` seconds without requests, into footprint[who][key].
   * @param {'rssEmptyLongIdle' | 'rssAfterRestartLongIdle'} key @param {number} lpid @param {number} vpid
   */
  async function longIdle(key, lpid, vpid) {
    if (o.longIdleSeconds === 0) return;
    await new Promise((r) => setTimeout(r, o.longIdleSeconds * 1000));
    /** @type {Record<string, number | null>} */ (footprint.logsvc)[key] = await readVmRss(lpid);
    /** @type {Record<string, number | null>} */ (footprint.vl)[key] = await readVmRss(vpid);
    log(`[idle] RSS after ${o.longIdleSeconds} s idle (${key}): logsvc ${((/** @type {any} */ (footprint.logsvc)[key] ?? 0) / 1e6).toFixed(1)} MB, VictoriaLogs ${((/** @type {any} */ (footprint.vl)[key] ?? 0) / 1e6).toFixed(1)} MB`);
  }

  let control = createControlClient(node.server.url);
  /** @type {Record<string, { repo: string, token: string, project: number }>} */
  const targets = {};
  let project = 1;
  for (const dataset of /** @type {const} */ (['accesslog', 'json'])) {
    const repo = `peers-${dataset}`;
    const made = await graphql(control, node.adminToken, `mutation { createRepository(name: "${repo}") { repository { ingestTokens { token } } } }`);
    targets[dataset] = { repo, token: made.createRepository.repository.ingestTokens[0].token, project: project++ };
  }

  // --- Ingest: the same bodies, one server at a time; the order alternates between datasets.
  const ingest = [];
  for (const [k, dataset] of /** @type {const} */ (['accesslog', 'json']).entries()) {
    const c = corpora[dataset];
    const t = /** @type {{ repo: string, token: string, project: number }} */ (targets[dataset]);
    /** @type {Record<string, any>} */
    const res = {};
    const order = k % 2 === 0 ? ['logsvc', 'vl'] : ['vl', 'logsvc'];
    const fsyncBefore = await fsyncProbe(node.dataDir);
    for (const who of order) {
      if (who === 'logsvc') {
        const pool = createLoadPool(node.server.url, o.connections);
        const r = await load(pool, '/api/v1/ingest/service-structured', { 'content-type': 'application/json', authorization: `Bearer ${t.token}` }, c.logsvcFile, node.server.pid, c.events, o.connections);
        await pool.close();
        const cpu1 = await readCpuSeconds(node.server.pid);
        res.logsvc = { seconds: r.seconds, eps: c.events / r.seconds, cpuPerMillion: r.cpu0 === null || cpu1 === null ? null : ((cpu1 - r.cpu0) / c.events) * 1e6, retries: r.retries };
      } else {
        const pool = createLoadPool(vl.url, o.connections);
        const t0 = performance.now();
        const r = await load(pool, VL_INSERT_PATH, { 'content-type': 'application/stream+json', ...tenantHeaders(t.project) }, c.vlFile, vl.pid, c.events, o.connections);
        await forceFlush(pool);
        const seconds = (performance.now() - t0) / 1000;
        await pool.close();
        const cpu1 = await readCpuSeconds(vl.pid);
        res.vl = { seconds, eps: c.events / seconds, cpuPerMillion: r.cpu0 === null || cpu1 === null ? null : ((cpu1 - r.cpu0) / c.events) * 1e6, retries: r.retries };
      }
      log(`[ingest] ${dataset} ${who === 'vl' ? 'VictoriaLogs' : 'logsvc'}: ${Math.round(res[who].eps)} events/s, ${res[who].cpuPerMillion?.toFixed(2)} CPU s per million events`);
    }
    const fsync = { before: fsyncBefore, after: await fsyncProbe(node.dataDir) };
    log(`[ingest] ${dataset} disk: fsync of 256 KiB p50 / p90 ${fsync.before.p50Ms.toFixed(2)} / ${fsync.before.p90Ms.toFixed(2)} ms before, ${fsync.after.p50Ms.toFixed(2)} / ${fsync.after.p90Ms.toFixed(2)} ms after`);
    ingest.push({ dataset, events: c.events, logsvc: res.logsvc, vl: res.vl, fsync });
  }

  // --- Settle: logsvc writes every block to segments and reclaims its queue; VictoriaLogs flushes and merges.
  const digested = await waitDigested(control, node.adminToken, 600_000);
  if (!digested.complete) log(`[settle] logsvc still had undigested data after 600 s: ${JSON.stringify(digested)}`);
  const vlControl = createControlClient(vl.url);
  await forceFlush(vlControl);
  await Promise.all([settle(node.dataDir, 15_000, 300_000), settle(vlDir, 15_000, 300_000)]);
  const segs = await storedSegmentBytes(node.dataDir);
  const ld = await dirBytes(node.dataDir);
  const vd = await dirBytes(vlDir);
  const vp = await dirBytes(join(vlDir, 'partitions'));
  Object.assign(footprint.logsvc, { storedBytes: segs.bytes, dirBytes: ld.allocated, dirApparentBytes: ld.apparent, rssAfterIngest: await readVmRss(node.server.pid) });
  Object.assign(footprint.vl, { storedBytes: vp.allocated, dirBytes: vd.allocated, dirApparentBytes: vd.apparent, rssAfterIngest: await readVmRss(vl.pid) });
  log(`[settle] logsvc segments ${(segs.bytes / 1e6).toFixed(1)} MB, data dir ${(ld.allocated / 1e6).toFixed(1)} MB; VictoriaLogs partitions ${(vp.allocated / 1e6).toFixed(1)} MB, data dir ${(vd.allocated / 1e6).toFixed(1)} MB`);

  // --- Restart both with their data; idle RSS.
  await control.close();
  await vlControl.close();
  await node.server.stop(STOP_TIMEOUT_MS);
  await vl.stop(STOP_TIMEOUT_MS);
  node = await startLogsvcNode({ rootDir: root, config: nodeConfig, nodeFlags: [] });
  vl = await startVictoriaLogs(vlBin, vlDir);
  await new Promise((r) => setTimeout(r, IDLE_MS));
  footprint.logsvc.rssAfterRestart = await readVmRss(node.server.pid);
  footprint.vl.rssAfterRestart = await readVmRss(vl.pid);
  log(`[restart] idle RSS with data: logsvc ${((footprint.logsvc.rssAfterRestart ?? 0) / 1e6).toFixed(1)} MB, VictoriaLogs ${((footprint.vl.rssAfterRestart ?? 0) / 1e6).toFixed(1)} MB`);
  await longIdle('rssAfterRestartLongIdle', node.server.pid, vl.pid);
  control = createControlClient(node.server.url);
  const vlClient = createControlClient(vl.url);

  // --- Questions: a warm-up each, then timed runs alternating logsvc and VictoriaLogs.
  const questions = [];
  for (const dataset of /** @type {const} */ (['accesslog', 'json'])) {
    const c = corpora[dataset];
    const t = /** @type {{ repo: string, token: string, project: number }} */ (targets[dataset]);
    const range = { start: c.minTimestamp - 60_000, end: c.maxTimestamp + 60_000 };
    const list = o.skipQuestions ? [] : (dataset === 'accesslog' ? ACCESS_QUESTIONS : JSON_QUESTIONS).filter((q) => o.only.length === 0 || o.only.includes(q.id));
    const results = [];
    for (const q of list) {
      const { L, V, error } = await timeQuestion({ logsvc: control, logsvcPid: node.server.pid, adminToken: node.adminToken, repo: t.repo, vl: vlClient, vlPid: vl.pid, project: t.project, range }, q, o.repeat);
      const difference = error ?? (L[0] === undefined || V[0] === undefined ? 'no answer' : compareAnswers(q.answer, L[0].answer, V[0].answer, q.tolerance ?? 0));
      const cpuL = /** @type {number[]} */ (L.map((x) => x.cpuMs).filter((x) => x !== null));
      const cpuV = /** @type {number[]} */ (V.map((x) => x.cpuMs).filter((x) => x !== null));
      const r = {
        id: q.id,
        kind: q.kind,
        logsvcQuery: q.logsvc,
        vlQuery: q.vl,
        agree: difference === null,
        difference,
        logsvc: { medianMs: median(L.map((x) => x.ms)), medianCpuMs: median(cpuL), runsMs: L.map((x) => x.ms), answer: L[0]?.answer ?? null },
        vl: { medianMs: median(V.map((x) => x.ms)), medianCpuMs: median(cpuV), runsMs: V.map((x) => x.ms), answer: V[0]?.answer ?? null },
      };
      results.push(r);
      const ratio = r.logsvc.medianMs !== null && r.vl.medianMs !== null && r.vl.medianMs > 0 ? (r.logsvc.medianMs / r.vl.medianMs).toFixed(2) : '?';
      log(`[query] ${dataset} ${q.id.padEnd(11)} logsvc ${r.logsvc.medianMs?.toFixed(1)} ms, VictoriaLogs ${r.vl.medianMs?.toFixed(1)} ms (${ratio}x)  ${r.agree ? 'agree' : `DIFFER: ${difference}`}`);
    }
    questions.push({ dataset, events: c.events, results });
  }
  footprint.logsvc.rssAfterQueries = await readVmRss(node.server.pid);
  footprint.vl.rssAfterQueries = await readVmRss(vl.pid);
  await control.close();
  await vlClient.close();
  await node.server.stop(STOP_TIMEOUT_MS);
  await vl.stop(STOP_TIMEOUT_MS);

  const doc = { command, machine, date: new Date().toISOString(), vlVersion: VL_VERSION, logsvcVersion, logsvcBuild, options: o, ingest, footprint, questions };
  const md = markdown(doc);
  await writeFile(o.outJson, `${JSON.stringify(doc, null, 2)}\n`).catch(async (err) => {
    if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'ENOENT') throw err;
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(o.outJson, '..'), { recursive: true });
    await writeFile(o.outJson, `${JSON.stringify(doc, null, 2)}\n`);
  });
  await writeFile(o.outMd, md);
  process.stdout.write(`${md}\n`);
  log(`wrote ${o.outJson} and ${o.outMd}`);
  const differ = questions.flatMap((d) => d.results.filter((r) => !r.agree).map((r) => `${d.dataset}/${r.id}`));
  if (differ.length > 0) log(`answers differ for ${differ.join(', ')}`);
});
