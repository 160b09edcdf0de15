#!/usr/bin/env node
/**
 * The questions of run.mjs again and again on data ingested once: the first run fills a kept data
 * dir (logsvc's and VictoriaLogs', the same corpus as run.mjs), later runs start both servers on it
 * and only ask. For working on query speed: change the build, ask again, compare; or profile the
 * node (`--node-flags "--cpu-prof --cpu-prof-dir=DIR"`; the main thread and each worker thread
 * write a profile when the node stops).
 *
 *   node bench/peers/ask.mjs [--quick] [--only LIST] [--repeat N] [--data DIR] [--fresh] [--node-flags F]
 *
 * The data dir is written by the build that filled it: after a segment format change, pass
 * --fresh. Both servers bind 127.0.0.1 and are stopped by PID at the end.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { staleDist } from '../lib/build.mjs';
import { numberOption, runWithin, startRun } from '../lib/cli.mjs';
import { waitDigested } from '../lib/digest.mjs';
import { createControlClient, createLoadPool, graphql } from '../lib/http.mjs';
import { startLogsvcNode } from '../lib/processes.mjs';
import { compareAnswers } from './compare.mjs';
import { ensureCorpus } from './corpus.mjs';
import { ACCESS_QUESTIONS, JSON_QUESTIONS } from './questions.mjs';
import { NODE_CONFIG, load, median, timeQuestion } from './session.mjs';
import { DEFAULT_VL_BIN, VL_INSERT_PATH, ensureBinary, forceFlush, startVictoriaLogs, tenantHeaders } from './victorialogs.mjs';

const HELP = `node bench/peers/ask.mjs [options]
  --access N          access-log events (default 1000000)
  --json N            JSON events (default 300000)
  --quick             300000 access-log and 100000 JSON events
  --only LIST         question ids (default all), e.g. filter,groupby; prefix a dataset to ask one
                      side only: json:filter,acc:range
  --repeat N          timed runs per question after one warm-up (default 5)
  --data DIR          the kept data dirs (default ~/.cache/logsvc/peers-ask/<access>-<json>)
  --fresh             remove DIR first and ingest again
  --node-flags F      flags for the node executable, space-separated (--node-flags="--cpu-prof --cpu-prof-dir=/tmp/p")
  --bin PATH          the logsvc executable (default: this checkout's bin/logsvc), e.g. another build's
  --vl-bin PATH       the VictoriaLogs binary (default ${DEFAULT_VL_BIN})
  --budget-minutes N  the whole run's time budget (default 60)
  --allow-stale       run even when the logsvc build's dist/ is older than its source or commit
`;

const { values: v } = parseArgs({
  options: {
    access: { type: 'string', default: '1000000' },
    json: { type: 'string', default: '300000' },
    quick: { type: 'boolean', default: false },
    only: { type: 'string', default: '' },
    repeat: { type: 'string', default: '5' },
    data: { type: 'string' },
    fresh: { type: 'boolean', default: false },
    'node-flags': { type: 'string', default: '' },
    bin: { type: 'string' },
    'vl-bin': { type: 'string', default: DEFAULT_VL_BIN },
    'budget-minutes': { type: 'string', default: '60' },
    'allow-stale': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
/** @type {string[]} */
const problems = [];
const num = numberOption(problems);
/** @param {'access' | 'json' | 'repeat' | 'budget-minutes'} name @param {number} min @param {number} max */
const int = (name, min, max) => num(name, String(v[name]), min, max, true);
const access = v.quick ? 300_000 : int('access', 1000, 50_000_000);
const jsonEvents = v.quick ? 100_000 : int('json', 1000, 20_000_000);
const o = {
  access,
  json: jsonEvents,
  only: String(v.only).split(',').filter((s) => s !== ''),
  repeat: int('repeat', 1, 100),
  data: v.data ?? join(homedir(), '.cache', 'logsvc', 'peers-ask', `${access}-${jsonEvents}`),
  fresh: v.fresh === true,
  nodeFlags: String(v['node-flags']).split(' ').filter((s) => s !== ''),
  bin: v.bin ?? null,
  vlBin: String(v['vl-bin']),
  budgetMinutes: int('budget-minutes', 1, 24 * 60),
};
// An id that names no question would silently ask nothing of it.
const knownIds = new Set([...ACCESS_QUESTIONS.flatMap((q) => [q.id, `acc:${q.id}`, `accesslog:${q.id}`]), ...JSON_QUESTIONS.flatMap((q) => [q.id, `json:${q.id}`])]);
for (const id of o.only) if (!knownIds.has(id)) problems.push(`--only: no question ${id}`);
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
// A stale dist/ would be measured under the new code's name.
const stale = v['allow-stale'] === true ? null : await staleDist(o.bin === null ? REPO_ROOT : dirname(dirname(resolve(o.bin))));
if (stale !== null) problems.push(`${stale} (or pass --allow-stale)`);
const { abort } = startRun(v.help ? { help: true } : problems.length > 0 ? { help: false, problems } : { help: false, options: o }, HELP);
const log = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);

const STOP_TIMEOUT_MS = 120_000;
const DATASETS = /** @type {const} */ (['accesslog', 'json']);

await runWithin(abort, o.budgetMinutes * 60_000, `${o.budgetMinutes} minutes`, async () => {
  const cacheDir = join(homedir(), '.cache', 'logsvc', 'peers-corpus');
  const corpora = {
    accesslog: ensureCorpus({ dataset: 'accesslog', events: o.access, batch: 1000, seed: 1, cacheDir, progress: log }),
    json: ensureCorpus({ dataset: 'json', events: o.json, batch: 1000, seed: 1, cacheDir, progress: log }),
  };
  const vlBin = ensureBinary(o.vlBin, log);
  const logsvcRoot = join(o.data, 'logsvc');
  const vlDir = join(o.data, 'vl');
  const readyFile = join(o.data, 'ready.json');
  if (o.fresh) await rm(o.data, { recursive: true, force: true });
  if (!existsSync(readyFile)) {
    await rm(o.data, { recursive: true, force: true });
    await mkdir(logsvcRoot, { recursive: true });
    log(`[prepare] ingesting into ${o.data}`);
    const node = await startLogsvcNode({ rootDir: logsvcRoot, config: NODE_CONFIG, nodeFlags: [], ...(o.bin === null ? {} : { bin: o.bin }) });
    const vl = await startVictoriaLogs(vlBin, vlDir);
    const control = createControlClient(node.server.url);
    /** @type {Record<string, { repo: string, project: number }>} */
    const targets = {};
    for (const [k, dataset] of DATASETS.entries()) {
      const repo = `peers-${dataset}`;
      const made = await graphql(control, node.adminToken, `mutation { createRepository(name: "${repo}") { repository { ingestTokens { token } } } }`);
      const token = made.createRepository.repository.ingestTokens[0].token;
      targets[dataset] = { repo, project: k + 1 };
      const c = corpora[dataset];
      const lp = createLoadPool(node.server.url, 4);
      await load(lp, '/api/v1/ingest/service-structured', { 'content-type': 'application/json', authorization: `Bearer ${token}` }, c.logsvcFile, node.server.pid, c.events, 4);
      await lp.close();
      const vp = createLoadPool(vl.url, 4);
      await load(vp, VL_INSERT_PATH, { 'content-type': 'application/stream+json', ...tenantHeaders(k + 1) }, c.vlFile, vl.pid, c.events, 4);
      await forceFlush(vp);
      await vp.close();
      log(`[prepare] ${dataset}: ${c.events} events sent to both`);
    }
    const digested = await waitDigested(control, node.adminToken, 600_000);
    if (!digested.complete) throw new Error(`logsvc still had undigested data after 600 s: ${JSON.stringify(digested)}`);
    await control.close();
    await node.server.stop(STOP_TIMEOUT_MS);
    await vl.stop(STOP_TIMEOUT_MS);
    await writeFile(readyFile, JSON.stringify({ targets, adminToken: node.adminToken }));
  }
  const { targets } = JSON.parse(await readFile(readyFile, 'utf8'));

  const node = await startLogsvcNode({ rootDir: logsvcRoot, config: NODE_CONFIG, nodeFlags: o.nodeFlags, ...(o.bin === null ? {} : { bin: o.bin }) });
  const vl = await startVictoriaLogs(vlBin, vlDir);
  const control = createControlClient(node.server.url);
  const vlClient = createControlClient(vl.url);
  log(`load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  process.stdout.write(`${'question'.padEnd(22)} ${'logsvc ms'.padStart(10)} ${'VL ms'.padStart(8)} ${'ratio'.padStart(7)}   CPU ms logsvc / VL   answers\n`);
  for (const dataset of DATASETS) {
    const c = corpora[dataset];
    const t = targets[dataset];
    const range = { start: c.minTimestamp - 60_000, end: c.maxTimestamp + 60_000 };
    // A dataset prefix as the table prints it (acc) or in full (accesslog).
    const prefixes = dataset === 'json' ? ['json'] : ['acc', 'accesslog'];
    const asked = (/** @type {string} */ id) => o.only.length === 0 || o.only.includes(id) || prefixes.some((p) => o.only.includes(`${p}:${id}`));
    for (const q of (dataset === 'accesslog' ? ACCESS_QUESTIONS : JSON_QUESTIONS).filter((x) => asked(x.id))) {
      const { L, V, error } = await timeQuestion({ logsvc: control, logsvcPid: node.server.pid, adminToken: node.adminToken, repo: t.repo, vl: vlClient, vlPid: vl.pid, project: t.project, range }, q, o.repeat);
      const difference = error ?? (L[0] === undefined || V[0] === undefined ? 'no answer' : compareAnswers(q.answer, L[0].answer, V[0].answer, q.tolerance ?? 0));
      const ml = median(L.map((x) => x.ms));
      const mv = median(V.map((x) => x.ms));
      const cl = median(/** @type {number[]} */ (L.map((x) => x.cpuMs).filter((x) => x !== null)));
      const cv = median(/** @type {number[]} */ (V.map((x) => x.cpuMs).filter((x) => x !== null)));
      const ratio = ml !== null && mv !== null && mv > 0 ? `${(ml / mv).toFixed(2)}x` : '?';
      process.stdout.write(`${`${dataset === 'json' ? 'json' : 'acc'} ${q.id}`.padEnd(22)} ${(ml?.toFixed(1) ?? '-').padStart(10)} ${(mv?.toFixed(1) ?? '-').padStart(8)} ${ratio.padStart(7)}   ${(cl === null ? '-' : cl.toFixed(0)).padStart(6)} / ${(cv === null ? '-' : cv.toFixed(0)).padEnd(6)}     ${difference === null ? 'agree' : `DIFFER: ${difference}`}\n`);
    }
  }
  log(`load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  await control.close();
  await vlClient.close();
  await node.server.stop(STOP_TIMEOUT_MS);
  await vl.stop(STOP_TIMEOUT_MS);
});
