#!/usr/bin/env node
/**
 * The shippers' doors against the structured endpoint, side by side in one run on one node: the
 * same seeded events (raw string, parsed attributes, timestamp) sent as a structured body, as HEC
 * events (string `event`, attributes in `fields`), as Elasticsearch bulk documents (`message` plus
 * the attributes) and as an OTLP/HTTP protobuf request (body, attributes, timeUnixNano). With
 * `--parser kv` (the default) the HEC events carry no sourcetype and the bulk documents no type:
 * the path real shippers take, where the product's default parser, kv, runs on every message;
 * with `--parser none` they say `none` and no parser runs, so the comparison is the door's own
 * cost. The structured endpoint runs no parser either way (its token has none). Phases run in
 * rounds (A B C D, then D C B A, ...) so that a slow stretch of a shared machine or the digest's
 * growing work does not favour one door; per door it reports acknowledged events/s and the node's
 * CPU seconds per million events (user + system, all threads, from /proc), and each door's ratio
 * to structured. With `--base <bin/logsvc of another build>` a second node runs that build (A) next
 * to this checkout's (B), each phase run on A then B (B then A on odd rounds), for before/after
 * figures from one run.
 *
 *   node bench/doors/run.mjs [--dataset accesslog|json|kv] [--parser kv|none] [--seconds 10]
 *                            [--rounds 2] [--connections 8] [--batch 500] [--gzip]
 *                            [--base /path/to/bin/logsvc] [--out results.jsonl]
 */
import { appendFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { createDataset } from '../lib/datasets.mjs';
import { createControlClient, createLoadPool, graphql, postBody } from '../lib/http.mjs';
import { LOGSVC_BIN, makeTempDir, readCpuSeconds, startLogsvcNode } from '../lib/processes.mjs';
import { startRun } from '../lib/cli.mjs';

const HELP = `node bench/doors/run.mjs [options]
  --dataset NAME      accesslog | json | kv (default accesslog)
  --seconds N         measured seconds per phase (default 10)
  --warmup N          seconds of load before each phase's window (default 2)
  --rounds N          rounds over every door (default 2; odd rounds run in reverse order)
  --connections N     keep-alive connections (default 8)
  --batch N           events per request (default 500)
  --pool-events N     events generated up front (default 50000)
  --gzip              gzip every body (level 6)
  --parser NAME       kv (HEC without sourcetype, bulk without type: the default path) or none
  --base FILE         also run this logsvc executable (A) side by side with this checkout's (B)
  --doors LIST        comma-separated subset of structured,hec,bulk,otlp (default all)
  --out FILE          append the result as one JSON line
  --cpu-prof DIR      run the node under --cpu-prof, profiles (one per thread) into DIR
`;

const { values: v } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'accesslog' },
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '8' },
    batch: { type: 'string', default: '500' },
    'pool-events': { type: 'string', default: '50000' },
    gzip: { type: 'boolean', default: false },
    parser: { type: 'string', default: 'kv' },
    base: { type: 'string' },
    doors: { type: 'string', default: 'structured,hec,bulk,otlp' },
    out: { type: 'string' },
    'cpu-prof': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
const problems = [];
const num = (name, min, max) => {
  const n = Number(v[name]);
  if (!Number.isInteger(n) || n < min || n > max) problems.push(`--${name}: an integer from ${min} to ${max}`);
  return n;
};
const o = {
  dataset: v.dataset,
  seconds: num('seconds', 1, 600),
  warmup: num('warmup', 0, 60),
  rounds: num('rounds', 1, 10),
  connections: num('connections', 1, 256),
  batch: num('batch', 1, 10_000),
  poolEvents: num('pool-events', 1000, 1_000_000),
  gzip: v.gzip,
  parser: v.parser,
  base: v.base,
  doors: String(v.doors).split(','),
  out: v.out,
  cpuProf: v['cpu-prof'],
};
if (o.parser !== 'kv' && o.parser !== 'none') problems.push('--parser: kv or none');
for (const d of o.doors) if (!['structured', 'hec', 'bulk', 'otlp'].includes(d)) problems.push(`--doors: unknown door "${d}"`);
const { abort } = startRun(v.help ? { help: true } : problems.length > 0 ? { help: false, problems } : { help: false, options: o }, HELP);
const log = (s) => process.stderr.write(`${s}\n`);

// The OTLP encoder is the node's own protobuf home (the build's output): the bodies an OTLP exporter sends.
const { encodeLogsRequest } = await import('../../dist/ingest/doors/otlp-proto.js');

const PATHS = { structured: '/api/v1/ingest/service-structured', hec: '/services/collector/event', bulk: '/api/v1/ingest/elastic-bulk/_bulk', otlp: '/api/v1/ingest/otlp/v1/logs' };
const TYPES = { structured: 'application/json', hec: 'application/json', bulk: 'application/x-ndjson', otlp: 'application/x-protobuf' };
const HOSTS = ['web-01', 'web-02', 'web-03', 'web-04'];

const strings = (attrs) => {
  const out = {};
  for (const [k, val] of Object.entries(attrs)) out[k] = typeof val === 'string' ? val : JSON.stringify(val);
  return out;
};

/** One batch of events as each door's body. */
function bodies(events, host) {
  const structured = JSON.stringify([{ tags: { host, source: o.dataset }, events: events.map((e) => ({ timestamp: e.timestamp, attributes: e.attributes, rawstring: e.rawstring })) }]);
  // kv: what shippers send (no sourcetype, no type), so the product's default parser runs.
  const none = o.parser === 'none';
  const hec = events.map((e) => JSON.stringify({ time: e.timestamp / 1000, host, source: o.dataset, ...(none ? { sourcetype: 'none' } : {}), event: e.rawstring, fields: strings(e.attributes) })).join('');
  const bulk = events.map((e) => `{"index":{}}\n${JSON.stringify({ '@timestamp': new Date(e.timestamp).toISOString(), message: e.rawstring, ...(none ? { type: 'none' } : {}), ...e.attributes })}\n`).join('');
  const otlp = encodeLogsRequest({
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'host.name', value: { stringValue: host } }] },
        scopeLogs: [
          {
            scope: { name: o.dataset },
            logRecords: events.map((e) => ({
              timeUnixNano: `${e.timestamp}000000`,
              body: { stringValue: e.rawstring },
              attributes: Object.entries(strings(e.attributes)).map(([key, s]) => ({ key, value: { stringValue: s } })),
            })),
          },
        ],
      },
    ],
  });
  const b = { structured: Buffer.from(structured), hec: Buffer.from(hec), bulk: Buffer.from(bulk), otlp };
  if (o.gzip) for (const k of Object.keys(b)) b[k] = gzipSync(b[k], { level: 6 });
  return b;
}

log(`node bench/doors/run.mjs ${process.argv.slice(2).join(' ')}`);
log(`machine: ${cpus().length} x ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}, ${new Date().toISOString()}`);

const next = createDataset(o.dataset, 1);
const pool = [];
for (let i = 0; i < Math.ceil(o.poolEvents / o.batch); i++) {
  const evs = [];
  for (let j = 0; j < o.batch; j++) evs.push(next());
  pool.push(bodies(evs, HOSTS[i % HOSTS.length]));
}
const sizes = Object.fromEntries(o.doors.map((d) => [d, Math.round(pool.reduce((n, b) => n + b[d].length, 0) / pool.length)]));
log(`pool: ${pool.length} bodies of ${o.batch} events; mean body bytes ${JSON.stringify(sizes)}`);

/** One node of a build, with a repository and its ingest token, and a load pool. */
async function startBuild(label, bin) {
  const root = await makeTempDir(`logsvc-bench-doors-${label}-`);
  const { server, adminToken } = await startLogsvcNode({ rootDir: root, bin, config: '[health]\ngrace_period_seconds = 600\n', nodeFlags: o.cpuProf === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', `${o.cpuProf}/${label}`] });
  const control = createControlClient(server.url);
  const repo = (await graphql(control, adminToken, 'mutation { createRepository(name: "doors") { repository { ingestTokens { token } } } }')).createRepository.repository;
  return { label, server, control, token: repo.ingestTokens[0].token, load: createLoadPool(server.url, o.connections) };
}
const builds = o.base === undefined ? [await startBuild('B', LOGSVC_BIN)] : [await startBuild('A', o.base), await startBuild('B', LOGSVC_BIN)];
if (o.base !== undefined) log(`A: ${o.base}; B: this checkout (${LOGSVC_BIN})`);

/** Closed-loop load on one door for warmup + seconds; returns events/s and CPU per million events in the window. */
async function phase(build, door) {
  const { server, token, load } = build;
  const headers = { 'content-type': TYPES[door], authorization: door === 'bulk' ? `Basic ${Buffer.from(`bench:${token}`).toString('base64')}` : `Bearer ${token}` };
  if (o.gzip) headers['content-encoding'] = 'gzip';
  const start = Date.now();
  const windowStart = start + o.warmup * 1000;
  const end = windowStart + o.seconds * 1000;
  let events = 0;
  let errors = 0;
  let firstError = null;
  let cpu0 = null;
  let i = Math.floor(Math.random() * pool.length);
  const worker = async () => {
    while (Date.now() < end) {
      const body = pool[i++ % pool.length][door];
      const r = await postBody(load, PATHS[door], headers, body);
      const t = Date.now();
      if (r.status !== 200) {
        errors++;
        firstError ??= `${r.status} ${r.text?.slice(0, 200)}`;
        if (r.status === 503) await new Promise((res) => setTimeout(res, 200));
        continue;
      }
      if (t >= windowStart && t < end) events += o.batch;
    }
  };
  const sampler = (async () => {
    await new Promise((r) => setTimeout(r, Math.max(0, windowStart - Date.now())));
    cpu0 = await readCpuSeconds(server.proc.pid);
  })();
  await Promise.all([...Array.from({ length: o.connections }, worker), sampler]);
  const cpu1 = await readCpuSeconds(server.proc.pid);
  const eps = events / o.seconds;
  const cpuPerMillion = cpu0 === null || cpu1 === null || events === 0 ? null : ((cpu1 - cpu0) / events) * 1e6;
  return { build: build.label, door, eps, cpuPerMillion, errors, firstError };
}

const results = [];
try {
  for (let r = 0; r < o.rounds; r++) {
    const order = r % 2 === 0 ? o.doors : [...o.doors].reverse();
    for (const d of order) {
      for (const b of r % 2 === 0 ? builds : [...builds].reverse()) {
        const p = await phase(b, d);
        results.push({ round: r, ...p });
        log(`round ${r} ${builds.length > 1 ? `${b.label} ` : ''}${d.padEnd(10)} ${Math.round(p.eps).toString().padStart(8)} events/s  ${p.cpuPerMillion === null ? '?' : p.cpuPerMillion.toFixed(1)} CPU s per million events${p.errors > 0 ? `  ${p.errors} errors (first: ${p.firstError})` : ''}`);
      }
    }
  }
} catch (err) {
  log(String(err?.stack ?? err));
  await abort('failed', 1);
}

const summary = [];
for (const b of builds) {
  const mine = o.doors.map((d) => {
    const rs = results.filter((x) => x.door === d && x.build === b.label);
    const eps = rs.reduce((n, x) => n + x.eps, 0) / rs.length;
    const cpu = rs.every((x) => x.cpuPerMillion !== null) ? rs.reduce((n, x) => n + x.cpuPerMillion, 0) / rs.length : null;
    return { build: b.label, door: d, eps, cpuPerMillion: cpu, errors: rs.reduce((n, x) => n + x.errors, 0) };
  });
  summary.push(...mine);
  const base = mine.find((s) => s.door === 'structured');
  process.stdout.write(`\n${builds.length > 1 ? `build ${b.label} (${b.label === 'A' ? o.base : 'this checkout'}), ` : ''}parser ${o.parser}${o.gzip ? ', gzip' : ''}\n`);
  process.stdout.write(`${'door'.padEnd(12)}${'events/s'.padStart(10)}${'vs structured'.padStart(15)}${'CPU s / 1M events'.padStart(20)}${'errors'.padStart(8)}\n`);
  for (const s of mine) {
    const ratio = base === undefined ? '' : `${((s.eps / base.eps) * 100).toFixed(0)}%`;
    process.stdout.write(`${s.door.padEnd(12)}${Math.round(s.eps).toString().padStart(10)}${ratio.padStart(15)}${(s.cpuPerMillion === null ? '?' : s.cpuPerMillion.toFixed(1)).padStart(20)}${String(s.errors).padStart(8)}\n`);
  }
  if (base !== undefined) {
    for (const d of ['hec', 'bulk', 'otlp']) {
      const s = mine.find((x) => x.door === d);
      if (s !== undefined) process.stdout.write(`target: ${d} >= 70% of structured: ${s.eps >= 0.7 * base.eps ? 'met' : 'NOT met'} (${((s.eps / base.eps) * 100).toFixed(0)}%)\n`);
    }
  }
}
process.stdout.write(`load average at the end: ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
if (o.out !== undefined) await appendFile(o.out, `${JSON.stringify({ at: new Date().toISOString(), options: o, results, summary })}\n`);
for (const b of builds) {
  await b.load.close();
  await b.control.close();
}
await abort('done', 0);
