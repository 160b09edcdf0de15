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
 * It samples the node's VmRSS every 50 ms and its HTTP thread's heap (used, external) from
 * /metrics every 500 ms, and prints the peaks, the answers by status, and the budgets. With
 * --base, a second node runs the base build (A) next to this one (B) on the same data, their
 * rounds taking turns (A, B, A, B ...), so both see the same machine load. Everything binds
 * 127.0.0.1; the nodes and their temp dirs are removed at the end.
 *
 *   node bench/hostile/run.mjs [--concurrency 8] [--rounds 3] [--groups 200000]
 *                              [--query-mb N] [--total-mb N] [--base /path/bin/logsvc] [--out FILE]
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
  --base FILE      also run this logsvc executable (A) side by side with this checkout's (B)
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
      base: { type: 'string' },
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
    base: values.base ?? null,
  };
  return problems.length > 0 ? { help: false, problems } : { help: false, options: o };
}

const { options: o, abort } = startRun(options(process.argv.slice(2)), HELP);

/** Reads one sample of a metric from Prometheus text (0 when absent). */
function metric(text, name) {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return m === null ? 0 : Number(m[1]);
}

await runWithin(abort, 45 * 60_000, '45 minutes', async () => {
  const query = ['[health]', 'grace_period_seconds = 3600', '[query]', 'max_concurrent = 64'];
  if (o.queryMb !== null) query.push(`max_query_memory_bytes = ${o.queryMb * MIB}`);
  if (o.totalMb !== null) query.push(`max_total_query_memory_bytes = ${o.totalMb * MIB}`);
  const E500 = 'E'.repeat(500);
  const mix = [
    { name: 'replace, rows kept past the budget', q: `set="some-e" | replace("e", with="${E500}")` },
    { name: 'replace | tail(limit=max)', q: 'set="some-e" | replace("x", with="yyyyyyyyyy") | tail(limit=max)' },
    { name: 'groupBy(limit=max, collect)', q: 'set="small" | groupBy(k, limit=max, function=collect(@rawstring)) | count()' },
    { name: 'replace past the value bound', q: `set="all-e" | replace("e", with="${E500}")` },
  ];
  const builds = o.base === null ? [{ label: 'B', bin: undefined }] : [{ label: 'A', bin: o.base }, { label: 'B', bin: undefined }];
  const runs = [];
  for (const b of builds) {
    const root = await makeTempDir(`logsvc-bench-hostile-${b.label}-`);
    const { server, adminToken } = await startLogsvcNode({ rootDir: root, config: `${query.join('\n')}\n`, nodeFlags: o.nodeFlags, ...(b.bin === undefined ? {} : { bin: b.bin }) });
    const control = createControlClient(server.url);
    // As long as a query may run (query.max_query_seconds): every query gets its answer on a busy machine.
    const load = createLoadPool(server.url, o.concurrency, 330_000);
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
    progress(`${b.label}: ingesting`);
    for (let i = 0; i < 10; i += 2) await ingest(Array.from({ length: 2 }, () => ({ rawstring: 'e'.repeat(900_000), attributes: { set: 'all-e' } })));
    for (let i = 0; i < 20; i += 2) await ingest(Array.from({ length: 2 }, () => ({ rawstring: 'e'.repeat(20_000) + 'x'.repeat(880_000), attributes: { set: 'some-e' } })));
    for (let i = 0; i < o.groups; i += 5000) {
      await ingest(Array.from({ length: Math.min(5000, o.groups - i) }, (_, j) => ({ rawstring: `small event ${i + j} with some text to collect`, attributes: { set: 'small', k: `key-${i + j}` } })));
    }
    runs.push({ ...b, server, adminToken, control, load, baseline: 0, peak: 0, heapUsed: 0, external: 0, seconds: 0, answers: /** @type {Record<string, Record<string, number>>} */ ({}), statusAfter: 0, health: '' });
  }
  for (const r of runs) r.baseline = await readVmRss(r.server.pid);

  /** One round of --concurrency queries at once against one node, its RSS and heap sampled meanwhile. */
  const round = async (r) => {
    let sampling = true;
    const rss = (async () => {
      while (sampling) {
        const v = await readVmRss(r.server.pid).catch(() => 0);
        if (v > r.peak) r.peak = v;
        await new Promise((res) => setTimeout(res, 50));
      }
    })();
    const heap = (async () => {
      while (sampling) {
        try {
          const res = await r.control.request({ path: '/metrics', method: 'GET', headers: { authorization: `Bearer ${r.adminToken}` } });
          const text = await res.body.text();
          r.heapUsed = Math.max(r.heapUsed, metric(text, 'logsvc_nodejs_heap_size_used_bytes'));
          r.external = Math.max(r.external, metric(text, 'logsvc_nodejs_external_memory_bytes'));
        } catch {
          // A busy node may not answer in time; the RSS samples go on.
        }
        await new Promise((res) => setTimeout(res, 500));
      }
    })();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: o.concurrency }, async (_, i) => {
        const m = mix[o.only ?? i % mix.length];
        let code;
        try {
          const res = await r.load.request({
            path: '/api/v1/repositories/hostile/query',
            method: 'POST',
            headers: { authorization: `Bearer ${r.adminToken}`, 'content-type': 'application/json', accept: 'application/json' },
            body: JSON.stringify({ queryString: m.q, start: '1d' }),
          });
          const text = await res.body.text();
          code = res.statusCode === 200 ? '200' : `${res.statusCode} ${(/^[^(;:]*/.exec(text)?.[0] ?? '').slice(0, 60).trim()}`;
        } catch (err) {
          code = `no answer (${/** @type {Error} */ (err).message})`;
        }
        r.answers[m.name] ??= {};
        r.answers[m.name][code] = (r.answers[m.name][code] ?? 0) + 1;
      }),
    );
    r.seconds += (performance.now() - t0) / 1000;
    sampling = false;
    await Promise.all([rss, heap]);
  };
  for (let i = 0; i < o.rounds; i++) {
    for (const r of runs) {
      progress(`round ${i + 1} of ${o.rounds}, ${r.label}: ${o.concurrency} queries at once`);
      await round(r);
    }
  }

  for (const r of runs) {
    try {
      const status = await r.load.request({ path: '/api/v1/status', method: 'GET' });
      await status.body.text();
      r.statusAfter = status.statusCode;
    } catch {
      r.statusAfter = 0;
    }
    if (r.statusAfter !== 200) {
      try {
        const h = await r.control.request({ path: '/api/v1/health-json', method: 'GET', headers: { authorization: `Bearer ${r.adminToken}` } });
        r.health = (await h.body.text()).slice(0, 1500);
      } catch (err) {
        r.health = String(err);
      }
    }
  }

  log(`\n${o.concurrency} queries at once, ${o.rounds} rounds; budgets: per query ${o.queryMb === null ? 'default (256 MiB)' : `${o.queryMb} MiB`}, all queries ${o.totalMb === null ? 'default (1024 MiB)' : `${o.totalMb} MiB`}`);
  if (o.nodeFlags.length > 0) log(`node flags: ${o.nodeFlags.join(' ')}`);
  for (const r of runs) {
    log(`\n${r.label} (${r.bin ?? 'this checkout'}): RSS ${(r.baseline / MIB).toFixed(0)} MiB before the queries, peak ${(r.peak / MIB).toFixed(0)} MiB; HTTP thread heap used peak ${(r.heapUsed / MIB).toFixed(0)} MiB, external peak ${(r.external / MIB).toFixed(0)} MiB; queries took ${r.seconds.toFixed(1)} s`);
    for (const [name, codes] of Object.entries(r.answers)) log(`  ${name}: ${Object.entries(codes).map(([c, n]) => `${n} x ${c}`).join(', ')}`);
    if (!r.server.running) log(`node stderr (tail):\n${r.server.stderr.slice(-2000)}`);
    log(`  /api/v1/status afterwards: HTTP ${r.statusAfter}; node ${r.server.running ? 'running' : 'EXITED'}`);
    if (r.health !== '') log(`  health: ${r.health}`);
  }
  if (o.out !== null) {
    const results = runs.map((r) => ({ build: r.label, bin: r.bin ?? null, baselineRss: r.baseline, peakRss: r.peak, heapUsedPeak: r.heapUsed, externalPeak: r.external, seconds: r.seconds, answers: r.answers, statusAfter: r.statusAfter }));
    await appendFile(o.out, `${JSON.stringify({ bench: 'hostile', concurrency: o.concurrency, rounds: o.rounds, groups: o.groups, queryMb: o.queryMb, totalMb: o.totalMb, results })}\n`);
  }
  for (const r of runs) {
    await r.load.close();
    await r.control.close();
  }
});
