/**
 * The fixed cost of a small query over HTTP: two logsvc builds, each on its own copy of a kept
 * bench/peers data dir, asked the same questions one after another, A and B alternating every round.
 * Per build and question: wall p50/p90 of the timed asks and the node's CPU per ask (its main
 * thread, and all its threads), read from /proc/<pid>/task/<tid>/schedstat (nanoseconds) around
 * the timed asks. No VictoriaLogs: this measures logsvc against logsvc (`--control` makes B the
 * same build as A: the A/A noise).
 *
 *   node bench/peers/loop.mjs --data DIR [--access 1000000 --json 300000] [--data-b DIR] [--against OTHER/bin/logsvc | --control]
 *     [--asks 200] [--rounds 4] [--warm 50] [--only acc:count,json:rare,...] [--node-flags F]
 *
 * DIR is a kept data dir as bench/peers/ask.mjs writes it (`<DIR>/logsvc/data`, `<DIR>/ready.json`);
 * copy one first: two nodes must never run on one dir (`--data-b`, required with B).
 */
import { readFile, readdir } from 'node:fs/promises';
import { homedir, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createControlClient } from '../lib/http.mjs';
import { cleanupAll, startLogsvcNode } from '../lib/processes.mjs';
import { percentile } from '../lib/stats.mjs';
import { ACCESS_QUESTIONS, JSON_QUESTIONS } from './questions.mjs';
import { NODE_CONFIG } from './session.mjs';
import { ensureCorpus } from './corpus.mjs';

const STOP_TIMEOUT_MS = 20_000;
const DEADLINE_MS = 20 * 60_000;

const { values: v } = parseArgs({
  options: {
    data: { type: 'string' },
    access: { type: 'string', default: '1000000' },
    json: { type: 'string', default: '300000' },
    'data-b': { type: 'string' },
    against: { type: 'string' },
    control: { type: 'boolean', default: false },
    asks: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '4' },
    warm: { type: 'string', default: '50' },
    only: { type: 'string', default: 'acc:count,json:count,acc:rare,json:rare,acc:distinct,json:distinct' },
    'node-flags': { type: 'string', default: '' },
    help: { type: 'boolean', default: false },
  },
});
if (v.help || v.data === undefined) {
  process.stdout.write('usage: node bench/peers/loop.mjs --data DIR [--data-b DIR] [--against BIN | --control] [--asks N] [--rounds N] [--warm N] [--only LIST] [--node-flags F]\n');
  process.exit(v.help ? 0 : 2);
}
const withB = v.against !== undefined || v.control;
if (withB && v['data-b'] === undefined) throw new Error('--data-b DIR is required with --against or --control (a second copy of the data dir)');
const asks = Number(v.asks);
const rounds = Number(v.rounds);
const warm = Number(v.warm);
const nodeFlags = v['node-flags'] === '' ? [] : v['node-flags'].split(' ');

/** @param {number} pid @returns {Promise<{ main: number, all: number }>} ns on CPU */
async function threadCpu(pid) {
  let all = 0;
  let main = 0;
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    try {
      const ns = Number((await readFile(`/proc/${pid}/task/${tid}/schedstat`, 'utf8')).split(' ')[0]);
      all += ns;
      if (tid === String(pid)) main = ns;
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return { main, all };
}

/** The questions asked, as `acc:id` / `json:id`, with what each needs. */
function questions() {
  const wanted = v.only.split(',');
  /** @type {{ name: string, dataset: string, query: string }[]} */
  const out = [];
  for (const name of wanted) {
    const [prefix, id] = name.split(':');
    const list = prefix === 'json' ? JSON_QUESTIONS : ACCESS_QUESTIONS;
    const q = list.find((x) => x.id === id);
    if (q === undefined || (prefix !== 'json' && prefix !== 'acc')) throw new Error(`--only: no question ${name}`);
    out.push({ name, dataset: prefix === 'json' ? 'json' : 'accesslog', query: q.logsvc });
  }
  return out;
}

/**
 * @param {string} label
 * @param {string} dir
 * @param {string | undefined} bin
 */
async function startSide(label, dir, bin) {
  const { targets } = JSON.parse(await readFile(join(dir, 'ready.json'), 'utf8'));
  const node = await startLogsvcNode({ rootDir: join(dir, 'logsvc'), config: NODE_CONFIG, nodeFlags, ...(bin === undefined ? {} : { bin }) });
  const client = createControlClient(node.server.url);
  return { label, node, client, targets };
}

/**
 * @param {Awaited<ReturnType<typeof startSide>>} side
 * @param {{ name: string, dataset: string, query: string }} q
 * @param {{ start: number, end: number }} range
 */
async function ask(side, q, range) {
  const repo = side.targets[q.dataset].repo;
  const t0 = performance.now();
  const res = await side.client.request({
    path: `/api/v1/repositories/${encodeURIComponent(repo)}/query`,
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${side.node.adminToken}` },
    body: JSON.stringify({ queryString: q.query, start: range.start, end: range.end, isLive: false }),
  });
  const text = await res.body.text();
  const ms = performance.now() - t0;
  if (res.statusCode !== 200) throw new Error(`${side.label}: HTTP ${res.statusCode} to ${q.query}: ${text.slice(0, 300)}`);
  return { ms, text };
}

const deadline = setTimeout(() => {
  process.stderr.write('loop.mjs: deadline passed, stopping\n');
  void cleanupAll().then(() => process.exit(1));
}, DEADLINE_MS);

try {
  const cacheDir = join(homedir(), '.cache', 'logsvc', 'peers-corpus');
  const progress = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);
  const corpora = {
    accesslog: ensureCorpus({ dataset: 'accesslog', events: Number(v.access), batch: 1000, seed: 1, cacheDir, progress }),
    json: ensureCorpus({ dataset: 'json', events: Number(v.json), batch: 1000, seed: 1, cacheDir, progress }),
  };
  const sides = [await startSide('A', v.data, undefined)];
  if (withB) sides.push(await startSide('B', /** @type {string} */ (v['data-b']), v.control ? undefined : v.against));
  const qs = questions();
  process.stdout.write(`node bench/peers/loop.mjs ${process.argv.slice(2).join(' ')}\nload ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
  process.stdout.write(`${'round'.padEnd(6)} ${'side'.padEnd(5)} ${'question'.padEnd(14)} ${'p50 ms'.padStart(8)} ${'p90 ms'.padStart(8)} ${'main CPU ms/ask'.padStart(16)} ${'all CPU ms/ask'.padStart(15)}\n`);
  for (const q of qs) {
    const c = corpora[q.dataset];
    const range = { start: c.minTimestamp - 60_000, end: c.maxTimestamp + 60_000 };
    /** @type {Map<string, string>} */
    const answers = new Map();
    for (const side of sides) for (let i = 0; i < warm; i++) answers.set(side.label, (await ask(side, q, range)).text.replace(/"(?:queryId|id|timeMillis|processedBytes|[a-zA-Z]*[Tt]ime[a-zA-Z]*)":[^,}]*/g, ''));
    if (sides.length === 2 && answers.get('A') !== answers.get('B')) process.stdout.write(`  ${q.name}: answers differ:\n    A ${answers.get('A')?.slice(0, 300)}\n    B ${answers.get('B')?.slice(0, 300)}\n`);
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const ms = [];
        const cpu0 = await threadCpu(side.node.server.pid);
        for (let i = 0; i < asks; i++) ms.push((await ask(side, q, range)).ms);
        const cpu1 = await threadCpu(side.node.server.pid);
        ms.sort((a, b) => a - b);
        process.stdout.write(`${String(r + 1).padEnd(6)} ${side.label.padEnd(5)} ${q.name.padEnd(14)} ${percentile(ms, 50).toFixed(3).padStart(8)} ${percentile(ms, 90).toFixed(3).padStart(8)} ${((cpu1.main - cpu0.main) / 1e6 / asks).toFixed(3).padStart(16)} ${((cpu1.all - cpu0.all) / 1e6 / asks).toFixed(3).padStart(15)}\n`);
      }
    }
  }
  process.stdout.write(`load ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
  for (const side of sides) {
    await side.client.close();
    await side.node.server.stop(STOP_TIMEOUT_MS);
  }
} finally {
  clearTimeout(deadline);
  await cleanupAll();
}
