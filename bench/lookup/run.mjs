#!/usr/bin/env node
/**
 * The lookup and parser benchmark (issue 5).
 *
 * Part 1, match(): spawns a node, ingests the access-log corpus of bench/query (structured, through
 * the HTTP API), uploads a 1,000,000-row CSV of IP addresses (`ip,owner,zone`; every other one of
 * the corpus's client addresses is in it, the rest are random addresses), waits until everything is
 * in segments, then times `count()` against `match(...) | count()` (strict and not) and a groupBy
 * over the enriched field; answers are checked against a count per client taken without match().
 *
 * Part 2, parsers: single-thread throughput of the custom JSON parser and the custom regex parser
 * of the integration tests (test/integration/custom-parsers.test.ts) over generated lines, in this
 * process, with the compiled code in dist/ (one core: events/s per core), next to the built-in json
 * and kv parsers for scale.
 *
 * Everything binds 127.0.0.1; every process and temp dir is removed at the end, on Ctrl-C, on
 * errors and at the time budget.
 */
import { parseArgs } from 'node:util';
import { appendFile } from 'node:fs/promises';
import { describeBuild, distBuild } from '../lib/build.mjs';
import { createControlClient, graphql } from '../lib/http.mjs';
import { makeTempDir, readCpuSeconds, readVmRss, startLogsvcNode } from '../lib/processes.mjs';
import { commandLine, machine } from '../ingest/report.mjs';
import { runWithin, startRun } from '../lib/cli.mjs';
import { waitDigested } from '../lib/digest.mjs';
import { CorpusGenerator, ingestCorpus } from '../query/corpus.mjs';
import { runQuery } from '../query/queries.mjs';
import { mulberry32, createDataset } from '../lib/datasets.mjs';

const HELP = `Usage: node bench/lookup/run.mjs [options]

  --corpus-mb N      raw access-log text to ingest (default 1024)
  --rows N           rows of the lookup CSV (default 1000000)
  --repeat N         timed runs per query (default 3)
  --parser-events N  events per parser throughput measurement (default 200000)
  --skip-match       only the parser throughput part
  --out FILE         append the results as one JSON line
  --help
`;

const log = (/** @type {string} */ s) => process.stdout.write(`${s}\n`);
const progress = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);
const fmt = (/** @type {number} */ n, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

function options(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      'corpus-mb': { type: 'string', default: '1024' },
      rows: { type: 'string', default: '1000000' },
      repeat: { type: 'string', default: '3' },
      'parser-events': { type: 'string', default: '200000' },
      'skip-match': { type: 'boolean', default: false },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return { help: true };
  const problems = [];
  const num = (name, min, max) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < min || n > max) problems.push(`--${name}: an integer from ${min} to ${max}`);
    return n;
  };
  const o = { corpusMb: num('corpus-mb', 1, 100_000), rows: num('rows', 1, 1_000_000), repeat: num('repeat', 1, 100), parserEvents: num('parser-events', 1000, 10_000_000), skipMatch: values['skip-match'], out: values.out ?? null };
  return problems.length > 0 ? { help: false, problems } : { help: false, options: o };
}

/** The lookup CSV: `rows` rows; every other corpus client address plus random ones. */
function lookupCsv(rows, clients) {
  const rnd = mulberry32(7);
  const listed = new Set(clients.filter((_, i) => i % 2 === 0));
  const lines = ['ip,owner,zone'];
  for (const ip of listed) lines.push(`${ip},owner-${lines.length % 97},zone-${lines.length % 5}`);
  const seen = new Set(listed);
  while (lines.length - 1 < rows) {
    const ip = `${1 + Math.floor(rnd() * 223)}.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}`;
    if (seen.has(ip)) continue;
    seen.add(ip);
    lines.push(`${ip},owner-${lines.length % 97},zone-${lines.length % 5}`);
  }
  return { text: `${lines.join('\n')}\n`, listed: seen };
}

/** The access-log generator's client addresses (the same seed as the corpus). */
function corpusClients(seed) {
  const next = createDataset('accesslog', seed);
  const out = new Set();
  for (let i = 0; i < 200_000; i++) out.add(next().attributes.client);
  return [...out].sort();
}

async function upload(url, token, repo, name, text) {
  const form = new FormData();
  form.append('file', new Blob([text]), name);
  const res = await fetch(`${url}/api/v1/repositories/${repo}/files`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`upload failed: HTTP ${res.status} ${body.slice(0, 300)}`);
  return JSON.parse(body);
}

async function matchPart(o, results) {
  const root = await makeTempDir('logsvc-bench-lookup-');
  const config = '[digest]\nflush_block_seconds = 5\n\n[ingest]\nmax_undigested_bytes = 68719476736\n';
  const { server, adminToken } = await startLogsvcNode({ rootDir: root, config, nodeFlags: [] });
  const url = server.url;
  const pid = server.pid;
  const control = createControlClient(url);
  const repo = 'bench';
  const created = await graphql(control, adminToken, `mutation { createRepository(name: "${repo}") { repository { id ingestTokens { token } } } }`);
  const token = created.createRepository.repository.ingestTokens[0].token;

  const seed = 1;
  const clients = corpusClients(seed);
  const csv = lookupCsv(o.rows, clients);
  const t0 = performance.now();
  const file = await upload(url, adminToken, repo, 'ips.csv', csv.text);
  const uploadSeconds = (performance.now() - t0) / 1000;
  progress(`[upload] ${file.rows} rows, ${fmt(Buffer.byteLength(csv.text) / 1e6, 1)} MB in ${uploadSeconds.toFixed(2)} s (parse + pack on a worker, fsync)`);

  const endMs = Date.now();
  const spanMs = 20 * 3600_000;
  const generator = new CorpusGenerator({ seed, targetRawBytes: o.corpusMb * 1e6, startMs: endMs - spanMs, spanMs, rare: 0, batch: 2000 });
  const ingest = await ingestCorpus({ url, token, generator, connections: 4, endMs, nodeCpu: () => readCpuSeconds(pid), progress });
  const digest = await waitDigested(control, adminToken, 30 * 60_000);
  progress(`[ingest] ${fmt(ingest.corpus.events)} events, ${fmt(ingest.corpus.rawBytes / 1e6)} MB raw in ${ingest.seconds.toFixed(1)} s; digested after ${digest.seconds.toFixed(1)} s more`);

  // The expected answers: events per client, without match().
  const perClient = await runQuery({ client: control, repo, token: adminToken, q: { name: 'groupBy(client)', queryString: 'groupBy(client, limit=max)', what: 'reference', check: () => null }, start: '24hours', repeat: 1, timeoutMs: 600_000, pid, corpus: ingest.corpus, progress });
  const refRows = await (await fetch(`${url}/api/v1/repositories/${repo}/query`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ queryString: 'groupBy(client, limit=max)', start: '24hours' }) })).json();
  const total = refRows.reduce((n, r) => n + Number(r._count), 0);
  const matched = refRows.filter((r) => csv.listed.has(r.client)).reduce((n, r) => n + Number(r._count), 0);
  void perClient;
  const countIs = (want) => (rows) => (rows.length === 1 && Number(rows[0]._count) === want ? null : `expected _count ${want}, got ${JSON.stringify(rows).slice(0, 200)}`);
  const cases = [
    { name: 'count()', queryString: 'count()', what: 'baseline: full scan', check: countIs(total) },
    { name: 'match strict | count()', queryString: 'match(file="ips.csv", field=client, column=ip) | count()', what: 'filter by 1M-row file', check: countIs(matched) },
    { name: 'match enrich | count()', queryString: 'match(file="ips.csv", field=client, column=ip, strict=false) | count()', what: 'enrich every event', check: countIs(total) },
    { name: 'groupBy(client)', queryString: 'groupBy(client)', what: 'baseline: one field read', check: () => null },
    { name: 'match | groupBy(zone)', queryString: 'match(file="ips.csv", field=client, column=ip) | groupBy(zone)', what: 'enriched field aggregated', check: (rows) => (rows.reduce((n, r) => n + Number(r._count), 0) === matched ? null : 'zone counts do not add up to the matched events') },
  ];
  const queries = [];
  for (const q of cases) queries.push(await runQuery({ client: control, repo, token: adminToken, q, start: '24hours', repeat: o.repeat, timeoutMs: 600_000, pid, corpus: ingest.corpus, progress }));
  const rss = await readVmRss(pid);
  results.match = { rows: file.rows, csvBytes: Buffer.byteLength(csv.text), uploadSeconds, events: ingest.corpus.events, rawBytes: ingest.corpus.rawBytes, ingestSeconds: ingest.seconds, total, matched, rssBytes: rss, queries: queries.map((q) => ({ name: q.name, queryString: q.queryString, ok: q.ok, bestSeconds: q.bestSeconds, runs: q.runs.map((r) => ({ seconds: r.seconds, cpuSeconds: r.cpuSeconds, error: r.error, wrong: r.wrong })) })) };

  log(`\nmatch() over ${fmt(ingest.corpus.events)} events (${fmt(ingest.corpus.rawBytes / 1e6)} MB raw), lookup file ${fmt(file.rows)} rows (${fmt(Buffer.byteLength(csv.text) / 1e6, 1)} MB), ${fmt(matched)} events match`);
  log('| query | ok | best s | events/s | node CPU s (best run) | vs baseline |');
  log('|---|---|---|---|---|---|');
  const baseOf = { 'match strict | count()': 'count()', 'match enrich | count()': 'count()', 'match | groupBy(zone)': 'groupBy(client)' };
  const best = new Map(queries.map((q) => [q.name, q]));
  for (const q of queries) {
    const b = q.bestSeconds;
    const run = q.runs.find((r) => r.seconds === b);
    const base = baseOf[q.name] === undefined ? null : best.get(baseOf[q.name])?.bestSeconds;
    log(`| \`${q.queryString.replaceAll("|", "\\|")}\` | ${q.ok ? 'yes' : 'NO'} | ${b == null ? 'n/a' : b.toFixed(2)} | ${b == null ? 'n/a' : fmt(ingest.corpus.events / b)} | ${run?.cpuSeconds == null ? 'n/a' : run.cpuSeconds.toFixed(1)} | ${base == null || b == null ? '' : `${(b / base).toFixed(2)}x`} |`);
  }
  log(`node RSS after the queries: ${fmt(rss / 2 ** 20)} MiB`);
  await server.stop(120_000);
}

const JSON_SCRIPT = `parseJson()
| parseTimestamp("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", field=meta.time)
| drop([meta.time])`;
const REGEX_SCRIPT = `/^(?<ts>\\S+ \\S+) \\[(?<node>[^\\]]+)\\] (?<level>[A-Z]+) (?<component>\\w+): (?<message>.*)$/
| parseTimestamp("yyyy-MM-dd HH:mm:ss.SSS", field=ts, timezone="UTC")
| drop([ts])`;

async function parserPart(o, results) {
  const { CustomParser, ParserBudget } = await import('../../dist/parsers/index.js');
  const { builtInParser } = await import('../../dist/ingest/parsers/index.js');
  const limits = { maxEventsPerRequest: 1e9, maxEventBytes: 1 << 20, maxFieldsPerEvent: 1000, maxJsonDepth: 64 };
  const rnd = mulberry32(3);
  const services = ['checkout', 'payments', 'search', 'auth'];
  const t0 = Date.UTC(2026, 10, 21);
  const iso = (ms) => new Date(ms).toISOString();
  const jsonLines = Array.from({ length: 10_000 }, (_, i) =>
    JSON.stringify({ meta: { time: iso(t0 + i * 37), host: `h${i % 13}`, pid: 1000 + (i % 50) }, level: rnd() < 0.1 ? 'ERROR' : 'INFO', service: services[i % 4], msg: `request ${i} handled in ${Math.floor(rnd() * 900)} ms`, user: { id: `u${i % 300}`, plan: 'pro' } }),
  );
  const regexLines = Array.from({ length: 10_000 }, (_, i) => `${iso(t0 + i * 37).replace('T', ' ').slice(0, 23)} [web-${i % 8}] ${rnd() < 0.1 ? 'WARN' : 'INFO'} ${services[i % 4]}: request ${i} handled in ${Math.floor(rnd() * 900)} ms`);
  const measure = (name, lines, run) => {
    // Warm-up, then the timed pass, on this one thread.
    for (let i = 0; i < 20_000; i++) run(lines[i % lines.length]);
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    let n = 0;
    for (; n < o.parserEvents; n++) run(lines[n % lines.length]);
    const wall = (performance.now() - w0) / 1000;
    const cpu = process.cpuUsage(c0);
    const cpuS = (cpu.user + cpu.system) / 1e6;
    const r = { name, events: n, wallSeconds: wall, cpuSeconds: cpuS, eventsPerSecPerCore: n / cpuS, bytesPerEvent: lines.reduce((s, l) => s + l.length, 0) / lines.length };
    progress(`[parser] ${name}: ${fmt(r.eventsPerSecPerCore)} events/s per core (${n} events, ${wall.toFixed(2)} s wall, ${cpuS.toFixed(2)} s CPU)`);
    return r;
  };
  const budget = () => new ParserBudget({ maxEventMs: 1e9, maxRequestMs: 1e12 });
  const custom = (name, script, fieldsToTag) => {
    const p = new CustomParser({ id: name, name, script, fieldsToTag, fieldsToBeRemovedBeforeParsing: [], savedAt: 1 });
    const b = budget();
    return (line) => p.parse({ rawstring: line, input: {}, tags: {}, after: {}, timestamp: null, timezone: null }, 0, limits, b);
  };
  // Sanity: the parsers do what the tests say before they are timed.
  const one = custom('j', JSON_SCRIPT, ['service'])(jsonLines[0])[0];
  if (one.tags.service !== 'checkout' || one.event.timestamp !== t0 || one.event.fields['@error'] !== undefined) throw new Error(`JSON parser output unexpected: ${JSON.stringify(one)}`);
  const two = custom('r', REGEX_SCRIPT, ['level'])(regexLines[1])[0];
  if (two.event.fields.node !== 'web-1' || two.event.timestamp !== t0 + 37) throw new Error(`regex parser output unexpected: ${JSON.stringify(two)}`);
  const json = builtInParser('json');
  const kv = builtInParser('kv');
  results.parsers = [
    measure('custom JSON parser (parseJson | parseTimestamp | drop, fieldsToTag service)', jsonLines, custom('j', JSON_SCRIPT, ['service'])),
    measure('custom regex parser (regex | parseTimestamp | drop, fieldsToTag level)', regexLines, custom('r', REGEX_SCRIPT, ['level'])),
    measure('built-in json parser (same JSON lines, for scale)', jsonLines, (l) => json.parse(l, 1000)),
    measure('built-in kv parser (regex lines, for scale)', regexLines, (l) => kv.parse(l, 1000)),
  ];
  log('\nParser throughput, one thread of this process (events/s per core = events / CPU seconds):');
  log('| parser | bytes/event | events/s per core |');
  log('|---|---|---|');
  for (const r of results.parsers) log(`| ${r.name} | ${fmt(r.bytesPerEvent)} | ${fmt(r.eventsPerSecPerCore)} |`);
}

const { options: o, abort } = startRun(options(process.argv.slice(2)), HELP);
await runWithin(abort, (20 + o.corpusMb / 50) * 60_000, 'its time budget', async () => {
  const build = await distBuild();
  const results = { date: new Date().toISOString(), command: commandLine(), machine: machine(), build: describeBuild(build), options: o };
  log(`# bench/lookup ${results.date}\n${results.command}\n${JSON.stringify(results.machine)}\n${results.build}`);
  await parserPart(o, results);
  if (!o.skipMatch) await matchPart(o, results);
  if (o.out !== null) await appendFile(o.out, `${JSON.stringify(results)}\n`);
});
