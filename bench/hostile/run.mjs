#!/usr/bin/env node
/**
 * Hostile queries against one node (issue 24): the node's RSS while N worst-case queries run at
 * once, against the query memory budgets (docs/query-limits.md).
 *
 * Spawns a node (defaults, or the budgets given), ingests three data sets through the HTTP API —
 * ten ~900 KB events of "e" (replace() would make 450 M characters of each), twenty ~900 KB events
 * with 20,000 "e"s each (replace() makes ~11 M characters of each, under the per-value bound, that
 * add up past a query's budget when kept) and --groups small events with distinct keys — then runs
 * --rounds rounds of --concurrency queries at once, a mix of:
 *
 *   replace("e", with=<500 E's>) over the 900 KB events          (kept rows past the budget)
 *   replace("x", with="yyyyyyyyyy") | tail(limit=max)             (kept rows past the budget)
 *   groupBy(k, limit=max, function=collect(@rawstring))           (a million-group-class state)
 *   replace("e", with=<500 E's>) over the all-"e" events           (past the per-value bound)
 *
 * It samples the node's VmRSS every 50 ms and prints the peak, the answers by status, and the
 * budgets. Everything binds 127.0.0.1; the node and its temp dir are removed at the end.
 *
 *   node bench/hostile/run.mjs [--concurrency 8] [--rounds 3] [--groups 200000]
 *                              [--query-mb N] [--total-mb N] [--out FILE]
 */
import { parseArgs } from 'node:util';
import { appendFile } from 'node:fs/promises';
import { createControlClient, createLoadPool, graphql } from '../lib/http.mjs';
import { makeTempDir, readVmRss, startLogsvcNode } from '../lib/processes.mjs';
import { numberOption, runWithin, startRun } from '../lib/cli.mjs';

const HELP = `Usage: node bench/hostile/run.mjs [options]

  --concurrency N  queries at once (default 8)
  --rounds N       rounds of concurrent queries (default 3)
  --groups N       small events with distinct keys for the groupBy query (default 200000)
  --query-mb N     query.max_query_memory_bytes in MiB (default: the node's default)
  --total-mb N     query.max_total_query_memory_bytes in MiB (default: the node's default)
  --only N         run only query N of the mix (0-3)
  --node-flag F    a flag for the node's executable (repeatable), e.g. --node-flag=--heap-growing-percent=100
  --out FILE       append the results as one JSON line
  --help
`;

const log = (/** @type {string} */ s) => process.stdout.write(`${s}\n`);
const progress = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);
const MIB = 1024 * 1024;

function options(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      concurrency: { type: 'string', default: '8' },
      rounds: { type: 'string', default: '3' },
      groups: { type: 'string', default: '200000' },
      'query-mb': { type: 'string' },
      'total-mb': { type: 'string' },
      'node-flag': { type: 'string', multiple: true },
      only: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return { help: true };
  const problems = [];
  const num = numberOption(problems);
  const o = {
    concurrency: num('concurrency', values.concurrency, 1, 64, true),
    rounds: num('rounds', values.rounds, 1, 100, true),
    groups: num('groups', values.groups, 1000, 2_000_000, true),
    queryMb: values['query-mb'] === undefined ? null : num('query-mb', values['query-mb'], 1, 65536, true),
    totalMb: values['total-mb'] === undefined ? null : num('total-mb', values['total-mb'], 1, 1_048_576, true),
    nodeFlags: values['node-flag'] ?? [],
    only: values.only === undefined ? null : num('only', values.only, 0, 3, true),
    out: values.out ?? null,
  };
  return problems.length > 0 ? { help: false, problems } : { help: false, options: o };
}

const { options: o, abort } = startRun(options(process.argv.slice(2)), HELP);

await runWithin(abort, 30 * 60_000, '30 minutes', async () => {
  const root = await makeTempDir('logsvc-bench-hostile-');
  const query = ['[health]', 'grace_period_seconds = 3600', '[query]', 'max_concurrent = 64'];
  if (o.queryMb !== null) query.push(`max_query_memory_bytes = ${o.queryMb * MIB}`);
  if (o.totalMb !== null) query.push(`max_total_query_memory_bytes = ${o.totalMb * MIB}`);
  const { server, adminToken } = await startLogsvcNode({ rootDir: root, config: `${query.join('\n')}\n`, nodeFlags: o.nodeFlags });
  const control = createControlClient(server.url);
  const load = createLoadPool(server.url, o.concurrency);
  const created = await graphql(control, adminToken, 'mutation { createRepository(name: "hostile") { repository { ingestTokens { token } } } }');
  const ingestToken = created.createRepository.repository.ingestTokens[0].token;

  const now = Date.now();
  /** @param {{ rawstring: string, attributes: Record<string, string> }[]} events */
  const ingest = async (events) => {
    const body = JSON.stringify([{ tags: { host: 'bench' }, events: events.map((e, i) => ({ timestamp: now - 60_000 - i, ...e })) }]);
    const res = await load.request({ path: '/api/v1/ingest/humio-structured', method: 'POST', headers: { authorization: `Bearer ${ingestToken}`, 'content-type': 'application/json' }, body });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`ingest: HTTP ${res.statusCode} ${text.slice(0, 300)}`);
  };
  progress('ingesting');
  for (let i = 0; i < 10; i += 2) await ingest(Array.from({ length: 2 }, () => ({ rawstring: 'e'.repeat(900_000), attributes: { set: 'all-e' } })));
  for (let i = 0; i < 20; i += 2) await ingest(Array.from({ length: 2 }, () => ({ rawstring: 'e'.repeat(20_000) + 'x'.repeat(880_000), attributes: { set: 'some-e' } })));
  for (let i = 0; i < o.groups; i += 5000) {
    await ingest(Array.from({ length: Math.min(5000, o.groups - i) }, (_, j) => ({ rawstring: `small event ${i + j} with some text to collect`, attributes: { set: 'small', k: `key-${i + j}` } })));
  }

  const E500 = 'E'.repeat(500);
  const mix = [
    { name: 'replace, rows kept past the budget', q: `set="some-e" | replace("e", with="${E500}")` },
    { name: 'replace | tail(limit=max)', q: 'set="some-e" | replace("x", with="yyyyyyyyyy") | tail(limit=max)' },
    { name: 'groupBy(limit=max, collect)', q: 'set="small" | groupBy(k, limit=max, function=collect(@rawstring)) | count()' },
    { name: 'replace past the value bound', q: `set="all-e" | replace("e", with="${E500}")` },
  ];
  const baseline = await readVmRss(server.pid);
  let peak = baseline;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const rss = await readVmRss(server.pid).catch(() => 0);
      if (rss > peak) peak = rss;
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  /** @type {Record<string, Record<string, number>>} */
  const answers = {};
  const started = performance.now();
  for (let round = 0; round < o.rounds; round++) {
    progress(`round ${round + 1} of ${o.rounds}: ${o.concurrency} queries at once`);
    await Promise.all(
      Array.from({ length: o.concurrency }, async (_, i) => {
        const m = mix[o.only ?? i % mix.length];
        let code;
        try {
          const res = await load.request({
            path: '/api/v1/repositories/hostile/query',
            method: 'POST',
            headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json', accept: 'application/json' },
            body: JSON.stringify({ queryString: m.q, start: '1d' }),
          });
          const text = await res.body.text();
          code = res.statusCode === 200 ? '200' : `${res.statusCode} ${(/^[^(;:]*/.exec(text)?.[0] ?? '').slice(0, 60).trim()}`;
        } catch (err) {
          code = `no answer (${/** @type {Error} */ (err).message})`;
        }
        answers[m.name] ??= {};
        answers[m.name][code] = (answers[m.name][code] ?? 0) + 1;
      }),
    );
  }
  const seconds = (performance.now() - started) / 1000;
  sampling = false;
  await sampler;
  let statusCode = 0;
  try {
    const status = await load.request({ path: '/api/v1/status', method: 'GET' });
    await status.body.text();
    statusCode = status.statusCode;
  } catch {
    statusCode = 0;
  }
  const status = { statusCode };
  let health = '';
  if (statusCode !== 200) {
    try {
      const h = await control.request({ path: '/api/v1/health-json', method: 'GET' });
      health = (await h.body.text()).slice(0, 1500);
    } catch (err) {
      health = String(err);
    }
  }

  log(`\nnode RSS: ${(baseline / MIB).toFixed(0)} MiB before the queries, peak ${(peak / MIB).toFixed(0)} MiB while ${o.concurrency} ran at once (${o.rounds} rounds, ${seconds.toFixed(1)} s)`);
  if (o.nodeFlags.length > 0) log(`node flags: ${o.nodeFlags.join(' ')}`);
  log(`budgets: per query ${o.queryMb === null ? 'default (256 MiB)' : `${o.queryMb} MiB`}, all queries ${o.totalMb === null ? 'default (1024 MiB)' : `${o.totalMb} MiB`}`);
  for (const [name, codes] of Object.entries(answers)) log(`  ${name}: ${Object.entries(codes).map(([c, n]) => `${n} x ${c}`).join(', ')}`);
  if (!server.running) log(`node stderr (tail):\n${server.stderr.slice(-2000)}`);
  log(`/api/v1/status afterwards: HTTP ${status.statusCode}; node ${server.running ? 'running' : 'EXITED'}`);
  if (health !== '') log(`health: ${health}`);
  if (o.out !== null) {
    await appendFile(o.out, `${JSON.stringify({ bench: 'hostile', concurrency: o.concurrency, rounds: o.rounds, groups: o.groups, queryMb: o.queryMb, totalMb: o.totalMb, baselineRss: baseline, peakRss: peak, seconds, answers, statusAfter: status.statusCode })}\n`);
  }
  await load.close();
  await control.close();
});
