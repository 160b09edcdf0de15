#!/usr/bin/env node
/**
 * Idle RSS of a node, its first requests and its ingest rate: two builds of logsvc side by side in
 * one run (A: `--base DIR`, another checkout, built; B: this checkout), so their ratios mean
 * something on a shared machine. Per round, alternating which goes first:
 *
 * 1. both start on empty data dirs (the config bench/peers uses); RSS (VmRSS, and its anonymous and
 *    file-backed parts) after `--idle` seconds without requests;
 * 2. the first request of each kind, timed (what a lazily loaded module costs its first user):
 *    a GraphQL mutation (createRepository), the UI's function list, a structured ingest of 100
 *    events, a query (count()), then the same again (warm);
 * 3. bench/ingest against each (`--dataset`, `--seconds`): events/s and acknowledgement p99;
 * 4. both restarted on their data: RSS after `--idle` seconds.
 *
 * `node bench/footprint/run.mjs --base /work/main [--rounds 2] [--seconds 15] [--idle 5]`
 * Every process is stopped by PID at the end, temp dirs removed.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { cleanupAll, cleanupSync, makeTempDir, startLogsvcNode, LOGSVC_BIN } from '../lib/processes.mjs';
import { api, createRepo, ingestBench, option, sleep, summary } from '../lib/cluster.mjs';

const args = process.argv.slice(2);
const base = option(args, 'base', '');
if (base === '') {
  process.stderr.write('usage: node bench/footprint/run.mjs --base <other checkout> [--rounds 2] [--seconds 15] [--idle 5] [--dataset accesslog]\n');
  process.exit(2);
}
const rounds = Number(option(args, 'rounds', '2'));
const seconds = Number(option(args, 'seconds', '15'));
const idle = Number(option(args, 'idle', '5'));
const dataset = option(args, 'dataset', 'accesslog');
const builds = { A: join(base, 'bin', 'logsvc'), B: LOGSVC_BIN };
const CONFIG = '[digest]\nflush_block_seconds = 5\n\n[ingest]\nmax_undigested_bytes = 68719476736\n\n[health]\ngrace_period_seconds = 600\n';

process.on('exit', cleanupSync);
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => void cleanupAll().finally(() => process.exit(130)));

/** VmRSS, RssAnon and RssFile of a process, in bytes. */
async function rss(pid) {
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
}

async function timed(fn) {
  const t0 = performance.now();
  const r = await fn();
  return { ms: performance.now() - t0, r };
}

/** The first and the second request of each kind against a fresh node. */
async function firstRequests(node) {
  const out = {};
  const url = node.server.url;
  let token = '';
  for (const pass of ['first', 'second']) {
    const name = `fp${pass}`;
    const g = await timed(() => createRepo(url, node.adminToken, name));
    token = g.r;
    const ui = await timed(() => api(url, '/api/v1/ui/query-functions', node.adminToken));
    if (ui.r.status !== 200) throw new Error(`query-functions: HTTP ${ui.r.status}`);
    const events = Array.from({ length: 100 }, (_, i) => ({ timestamp: Date.now() - i, attributes: { i: String(i), pass }, rawstring: `GET /x/${i} 200 ${pass}` }));
    const ing = await timed(() => api(url, '/api/v1/ingest/humio-structured', token, [{ tags: { host: 'a' }, events }]));
    if (ing.r.status !== 200) throw new Error(`ingest: HTTP ${ing.r.status} ${ing.r.text.slice(0, 200)}`);
    const q = await timed(() => api(url, `/api/v1/repositories/${name}/query`, node.adminToken, { queryString: 'count()', start: '1h' }));
    if (q.r.status !== 200) throw new Error(`query: HTTP ${q.r.status} ${q.r.text.slice(0, 200)}`);
    out[pass] = { graphqlMs: g.ms, uiFunctionsMs: ui.ms, ingestMs: ing.ms, queryMs: q.ms };
  }
  return { ...out, token };
}

const fmt = (b) => (b / 1e6).toFixed(1);
const results = [];
console.log(`node bench/footprint/run.mjs ${args.join(' ')}`);
console.log(`machine: ${cpus().length} x ${cpus()[0]?.model}, node ${process.version}, load ${loadavg().map((x) => x.toFixed(1)).join(' ')}, ${new Date().toISOString()}`);
try {
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ['A', 'B'] : ['B', 'A'];
    const nodes = {};
    const roots = {};
    for (const who of order) {
      roots[who] = await makeTempDir(`logsvc-bench-footprint-${who}-`);
      nodes[who] = await startLogsvcNode({ rootDir: roots[who], config: CONFIG, nodeFlags: [], bin: builds[who] });
    }
    await sleep(idle * 1000);
    const r = { round, order: order.join(''), A: {}, B: {} };
    for (const who of order) r[who].idleEmpty = await rss(nodes[who].server.pid);
    for (const who of order) r[who].requests = await firstRequests(nodes[who]);
    for (const who of order) r[who].ingest = summary(await ingestBench(nodes[who].server.url, r[who].requests.token, [], { dataset, seconds }));
    for (const who of order) await nodes[who].server.stop(120_000);
    for (const who of order) nodes[who] = await startLogsvcNode({ rootDir: roots[who], config: CONFIG, nodeFlags: [], bin: builds[who] });
    await sleep(idle * 1000);
    for (const who of order) r[who].idleAfterRestart = await rss(nodes[who].server.pid);
    for (const who of order) await nodes[who].server.stop(120_000);
    for (const who of ['A', 'B']) {
      const x = r[who];
      const q = x.requests;
      console.log(
        `round ${round} ${who}: idle empty RSS ${fmt(x.idleEmpty.rss)} MB (anon ${fmt(x.idleEmpty.anon)}, file ${fmt(x.idleEmpty.file)}); after restart ${fmt(x.idleAfterRestart.rss)} MB (anon ${fmt(x.idleAfterRestart.anon)}); ` +
          `first/second ms: graphql ${q.first.graphqlMs.toFixed(0)}/${q.second.graphqlMs.toFixed(0)}, ui functions ${q.first.uiFunctionsMs.toFixed(0)}/${q.second.uiFunctionsMs.toFixed(0)}, ingest ${q.first.ingestMs.toFixed(0)}/${q.second.ingestMs.toFixed(0)}, query ${q.first.queryMs.toFixed(0)}/${q.second.queryMs.toFixed(0)}; ` +
          `ingest ${x.ingest.eventsPerSec} events/s, ack p99 ${x.ingest.p99} ms`,
      );
    }
    results.push(r);
  }
  console.log(JSON.stringify(results));
} finally {
  await cleanupAll();
}
