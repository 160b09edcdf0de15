/**
 * Block scan cost by query kind, in this process on one thread: the node's own block encoder
 * writes a segment of seeded access-log events, then the node's scan task (what a worker thread
 * runs for a query) reads it back for each query, best of `--repeat`. No HTTP, no pool: what one
 * core does per MB of raw text for each kind of query, and what the segment format stores.
 *
 * `--dist DIR` runs another build (a `dist/` of another checkout) so two segment formats can be
 * compared on the same data: `node bench/scan/run.mjs --dist /path/to/other/dist`.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createDataset } from '../lib/datasets.mjs';
import { numberOption } from '../lib/cli.mjs';

const HELP = `Usage: node bench/scan/run.mjs [--dist DIR] [--dataset accesslog|json] [--mb N] [--block-mb N] [--repeat N] [--only SUBSTRING]

Writes N MB (default 32) of seeded access-log (or JSON, attributes flattened as ingest does) text as blocks of --block-mb (default 0.8) raw MB with
the build's encoder into one segment, then times the build's scan task for each query (one
thread, best of --repeat, default 5), its column path and its per-event path alternately, and
prints CPU ms and raw MB per CPU second of each, and the stored ratio.
--dist picks the build (default: this checkout's dist/). --only runs the queries containing SUBSTRING.
`;

/** Query, and what it shows (access log). */
const ACCESS_QUERIES = [
  ['Firefox | count()', 'common word of bench/peers'],
  ['mozilla | count()', 'common word, free text: nothing pruned, every raw string searched'],
  ['inventory | count()', 'selective word, free text: in every block, in ~4 % of events'],
  ['/GET \\/products/ | count()', 'regex over @rawstring'],
  ['count()', 'no column read'],
  ['groupBy(statuscode)', 'one field read'],
  ['url=*checkout* | count()', 'field filter'],
  ['statuscode=404 | count()', 'field filter on a dictionary column'],
  ['responsesize > 100000 | count()', 'numeric range'],
  ['method=POST | groupBy(statuscode)', 'filter, then count by a field'],
  ['top(client, limit=10)', 'top 10 of a many-valued field'],
  ['timechart(span=1m)', 'time histogram'],
  ['"Mac OS X" | count()', 'phrase'],
  ['ireless | count()', 'substring'],
  ['/POST \\/api\\/v2\\/orders\\/[0-9]+\\/cancel/ | count()', 'regex of bench/peers: literal prefix, then a class'],
  ['percentile(field=responsetime, percentiles=[95])', 'percentile'],
];

/** The JSON set's questions (bench/peers/questions.mjs). */
const JSON_QUERIES = [
  ['failed | count()', 'common word'],
  ['"cache miss" | count()', 'phrase'],
  ['/request failed: (Timeout|Deadlock)/ | count()', 'regex with a literal prefix'],
  ['eadlockDetec | count()', 'substring'],
  ['level=ERROR | count()', 'field filter'],
  ['percentile(field=duration_ms, percentiles=[95])', 'percentile'],
  ['timechart(span=1m)', 'time histogram'],
  ['groupBy(service)', 'count by a field'],
  ['top(version, limit=10)', 'top 10'],
  ['count(user.id, distinct=true)', 'count distinct'],
  ['http.response.status >= 500 | count()', 'numeric range'],
  ['user.plan=enterprise | groupBy(user.geo.country)', 'nested filter, count by a nested field'],
  ['sum(http.response.bytes)', 'sum of a nested field'],
];

const { values } = parseArgs({ options: { dist: { type: 'string' }, dataset: { type: 'string', default: 'accesslog' }, only: { type: 'string', default: '' }, mb: { type: 'string', default: '32' }, 'block-mb': { type: 'string', default: '0.8' }, repeat: { type: 'string', default: '5' }, help: { type: 'boolean' } } });
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const problems = [];
const num = numberOption(problems);
const totalMb = num('mb', values.mb, 1, 4096, false);
const blockMb = num('block-mb', values['block-mb'], 0.01, 64, false);
const repeat = num('repeat', values.repeat, 1, 100, true);
if (values.dataset !== 'accesslog' && values.dataset !== 'json') problems.push('--dataset: accesslog or json');
if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n\n${HELP}`);
  process.exit(2);
}
const dist = resolve(values.dist ?? fileURLToPath(new URL('../../dist', import.meta.url)));
const load = (/** @type {string} */ m) => import(pathToFileURL(join(dist, m)).href);
const { emptyColumns, appendEvent, encodeBlock, readBlockMeta } = await load('segments/block.js');
const { lz4Codec } = await load('segments/codec.js');
const { SegmentWriter } = await load('segments/segment-writer.js');
const { runScanTask } = await load('query/scan.js');
const { DEFAULT_LIMITS } = await load('query/runtime.js');
const { SEGMENT_FORMAT_VERSION } = await load('segments/segment-file.js');
const { flattenInto } = await load('ingest/flatten.js');
const QUERIES = (values.dataset === 'json' ? JSON_QUERIES : ACCESS_QUERIES).filter(([q]) => q.includes(values.only));

const dir = await mkdtemp(join(tmpdir(), 'logsvc-bench-scan-'));
try {
  const w = await SegmentWriter.create(join(dir, 'r', 'ds'), { id: 'bench', repo: 'r', ds: 'ds', tags: {}, partition: 0, createdAt: 0 });
  const gen = createDataset(values.dataset, 1);
  let raw = 0;
  let ts = 1_700_000_000_000;
  let offset = 0;
  while (raw < totalMb * 1e6) {
    const c = emptyColumns();
    let bytes = 0;
    while (bytes < blockMb * 1e6) {
      const e = gen();
      ts += 3;
      /** @type {Record<string, string>} */
      const fields = {};
      // Attributes flattened as ingest flattens them (nested objects joined with ".").
      flattenInto(fields, e.attributes, '', 1000);
      // 500 events per queue record, as an ingest request of 500 would give.
      if (c.count % 500 === 0) offset += 4096;
      appendEvent(c, ts, 'Z', e.rawstring, fields, ts, offset, c.count % 500);
      bytes += Buffer.byteLength(e.rawstring);
    }
    raw += bytes;
    const block = encodeBlock(c, lz4Codec);
    await w.append(block, readBlockMeta(block, 0));
  }
  await w.close(0);
  const stored = (await stat(w.path)).size;
  const ctx = { start: 0, end: 2e12, timeZoneOffsetMinutes: 0, now: 2e12, live: false };
  process.stdout.write(`build ${dist} (segment format ${SEGMENT_FORMAT_VERSION}), ${w.blocks.length} blocks, ${(raw / 1e6).toFixed(1)} MB raw, stored ${(stored / 1e6).toFixed(2)} MB (${(raw / stored).toFixed(2)}x), best of ${repeat}, one thread\n`);
  // Both paths of the scan task, alternating on the same data: the column path (columnar.ts) and
  // every event through the stages one by one (`perEvent`). CPU time of this process (one thread),
  // which a machine shared with other work disturbs less than wall time.
  const once = (/** @type {string} */ q, /** @type {boolean} */ perEvent) => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const r = runScanTask({ spec: { text: q, args: {}, ctx, limits: DEFAULT_LIMITS }, repoName: 'r', units: [{ kind: 'seg', path: w.path, partition: 0, tags: {}, blocks: w.blocks }], deadline: Date.now() + 600_000, perEvent });
    const c = process.cpuUsage(c0);
    return { wall: performance.now() - t0, cpu: (c.user + c.system) / 1000, matched: r.matched };
  };
  process.stdout.write(`  ${'query'.padEnd(36)} ${'column path'.padStart(22)} ${'per event'.padStart(22)}  speed-up  matched\n`);
  for (const [q, what] of QUERIES) {
    const best = { col: { wall: Infinity, cpu: Infinity, matched: -1 }, ev: { wall: Infinity, cpu: Infinity, matched: -1 } };
    for (let i = 0; i < repeat; i++) {
      for (const k of /** @type {const} */ (['col', 'ev'])) {
        const r = once(q, k === 'ev');
        best[k].wall = Math.min(best[k].wall, r.wall);
        best[k].cpu = Math.min(best[k].cpu, r.cpu);
        best[k].matched = r.matched;
      }
    }
    const mbs = (/** @type {number} */ ms) => `${(raw / 1e6 / (Math.max(ms, 0.001) / 1000)).toFixed(0)} MB/s`;
    const cell = (/** @type {{ cpu: number }} */ b) => `${b.cpu.toFixed(1)} ms ${mbs(b.cpu)}`.padStart(22);
    const same = best.col.matched === best.ev.matched ? String(best.col.matched) : `DIFFER ${best.col.matched} vs ${best.ev.matched}`;
    process.stdout.write(`  ${q.padEnd(36)} ${cell(best.col)} ${cell(best.ev)}  ${(best.ev.cpu / Math.max(best.col.cpu, 0.001)).toFixed(1).padStart(7)}x  ${same}  (${what})\n`);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
