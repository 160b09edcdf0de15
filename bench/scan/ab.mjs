/**
 * Two builds' scan tasks side by side in one process, alternating on the same events: each build
 * writes its own segment with its own encoder (so two segment formats meet the same data), then
 * each query runs on both in turn, best CPU time of --repeat. What a format change does to a
 * query, with the machine's load falling on both sides alike.
 *
 *   node bench/scan/ab.mjs --a /work/main/dist --b dist [--dataset accesslog|json] [--repeat 9] QUERY...
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createDataset } from '../lib/datasets.mjs';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { a: { type: 'string' }, b: { type: 'string', default: 'dist' }, dataset: { type: 'string', default: 'accesslog' }, repeat: { type: 'string', default: '9' }, blocks: { type: 'string', default: '20' } } });
if (values.a === undefined || positionals.length === 0 || (values.dataset !== 'accesslog' && values.dataset !== 'json')) {
  process.stderr.write('Usage: node bench/scan/ab.mjs --a DIST --b DIST [--dataset accesslog|json] [--repeat N] [--blocks N] QUERY...\n');
  process.exit(2);
}
const repeat = Number(values.repeat);
const builds = [];
for (const dist of [values.a, values.b]) {
  // Every module of the build this bench uses, merged into one namespace object.
  const paths = ['segments/block.js', 'segments/codec.js', 'segments/segment-writer.js', 'query/scan.js', 'query/runtime.js', 'segments/segment-file.js', 'ingest/parsers/json.js'];
  const m = Object.assign({}, ...(await Promise.all(paths.map((p) => import(pathToFileURL(join(resolve(dist), p)).href)))));
  const { emptyColumns, appendEvent, encodeBlock, readBlockMeta, lz4Codec, SegmentWriter, runScanTask, DEFAULT_LIMITS, SEGMENT_FORMAT_VERSION } = m;
  const json = new m.JsonParser();
  const dir = await mkdtemp(join(tmpdir(), 'logsvc-bench-ab-'));
  const w = await SegmentWriter.create(join(dir, 'r', 'ds'), { id: 'b', repo: 'r', ds: 'ds', tags: {}, partition: 0, createdAt: 0 });
  const gen = createDataset(values.dataset, 1);
  let ts = 1.7e12;
  for (let b = 0; b < Number(values.blocks); b++) {
    const c = emptyColumns();
    let bytes = 0;
    while (bytes < 0.8e6) {
      const e = gen();
      ts += 3;
      const fields = values.dataset === 'json' ? json.parse(e.rawstring, 1000).fields : Object.fromEntries(Object.entries(e.attributes).map(([k, v]) => [k, String(v)]));
      appendEvent(c, ts, 'Z', e.rawstring, fields, ts, 1, c.count);
      bytes += e.rawstring.length;
    }
    const block = encodeBlock(c, lz4Codec);
    await w.append(block, readBlockMeta(block, 0));
  }
  await w.close(0);
  const ctx = { start: 0, end: 2e12, timeZoneOffsetMinutes: 0, now: 2e12, live: false };
  builds.push({ name: `${dist} (format ${SEGMENT_FORMAT_VERSION})`, dir, run: (/** @type {string} */ q) => runScanTask({ spec: { text: q, args: {}, ctx, limits: DEFAULT_LIMITS }, repoName: 'r', units: [{ kind: 'seg', path: w.path, partition: 0, tags: {}, blocks: w.blocks }], deadline: Date.now() + 600_000 }) });
}
try {
  process.stdout.write(`${values.dataset}, ${values.blocks} blocks of 0.8 MB raw; A = ${builds[0].name}, B = ${builds[1].name}; best CPU ms of ${repeat}\n`);
  for (const q of positionals) {
    const best = [Infinity, Infinity];
    const matched = [-1, -1];
    for (let r = 0; r < repeat; r++) {
      builds.forEach((b, i) => {
        const c0 = process.cpuUsage();
        matched[i] = b.run(q).matched;
        const c = process.cpuUsage(c0);
        best[i] = Math.min(best[i], (c.user + c.system) / 1000);
      });
    }
    const same = matched[0] === matched[1] ? String(matched[0]) : `DIFFER ${matched[0]} vs ${matched[1]}`;
    process.stdout.write(`  ${q.padEnd(50)} A ${best[0].toFixed(1).padStart(7)} ms  B ${best[1].toFixed(1).padStart(7)} ms  ${(best[0] / Math.max(best[1], 0.001)).toFixed(2)}x  ${same}\n`);
  }
} finally {
  for (const b of builds) await rm(b.dir, { recursive: true, force: true });
}
