#!/usr/bin/env node
/**
 * Scan tasks over the segment files of a real data dir (one repository's directory), in this
 * process, one or two builds alternating: the blocks as the node wrote them (sizes, segments per
 * datasource and partition, formats), cut into tasks of --task-mb as the executor cuts them; best
 * CPU ms of --repeat for each query, and the matched count (which must agree between builds).
 * Each build keeps its own block heads between runs (query/block-heads.ts), as a query thread does.
 *
 *   node bench/scan/dir.mjs --repo DATA/segments/<repo id> [--a DIST] [--b DIST] [--repeat 7] [--task-mb 16] [--warmup 0] [--spread] QUERY...
 *
 * --warmup N runs each query N times per build before the timed runs; --spread prints the p10 and
 * median CPU ms of the timed runs beside the best (for one build per process, alternated by the
 * caller, on a loaded machine: the best of a few runs swings with the other work).
 *
 * The range is the blocks' time span plus a minute each side (bench/peers asks the same). A build
 * reads only the segment formats it knows: compare format changes with ab.mjs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { a: { type: 'string', default: 'dist' }, b: { type: 'string' }, repo: { type: 'string' }, repeat: { type: 'string', default: '7' }, 'task-mb': { type: 'string', default: '16' }, warmup: { type: 'string', default: '0' }, spread: { type: 'boolean', default: false } } });
if (values.repo === undefined || positionals.length === 0) {
  process.stderr.write('Usage: node bench/scan/dir.mjs --repo DATA/segments/<repo id> [--a DIST] [--b DIST] [--repeat N] [--task-mb N] QUERY...\n');
  process.exit(2);
}
const files = [];
const walk = (/** @type {string} */ d) => {
  for (const e of readdirSync(d, { withFileTypes: true })) {
    const p = join(d, e.name);
    if (e.isDirectory()) walk(p);
    else if (p.endsWith('.seg')) files.push(p);
  }
};
walk(values.repo);
const taskBytes = Number(values['task-mb']) * 1e6;
const { cutIntoTasks } = await import(new URL('../../dist/query/executor.js', import.meta.url).href);
const builds = [];
for (const dist of [values.a, values.b].filter((x) => x !== undefined)) {
  const load = (/** @type {string} */ p) => import(pathToFileURL(join(resolve(/** @type {string} */ (dist)), p)).href);
  const sf = await load('segments/segment-file.js');
  const sc = await load('query/scan.js');
  const rt = await load('query/runtime.js');
  const units = files.map((p) => {
    const s = sf.parseSegment(readFileSync(p), p);
    return { kind: 'seg', path: p, partition: s.meta.partition, tags: s.meta.tags, blocks: s.blocks.map((/** @type {any} */ b) => ({ pos: b.pos, headerLength: b.headerLength, bloomLength: b.bloomLength, gramLength: b.gramLength, fieldGrams: b.fieldGrams === true, ...(b.framed ? { framed: true } : {}), compressedLength: b.compressedLength, uncompressedLength: b.uncompressedLength, eventCount: b.eventCount, minTs: b.minTs, maxTs: b.maxTs })) };
  });
  // Tasks as the executor cuts them (this checkout's build: the cut is data, the same for A and B).
  const tasks = cutIntoTasks(units, taskBytes);
  let lo = Infinity;
  let hi = -Infinity;
  for (const u of units) for (const b of u.blocks) [lo, hi] = [Math.min(lo, b.minTs), Math.max(hi, b.maxTs)];
  const ctx = { start: lo - 60_000, end: hi + 60_000, timeZoneOffsetMinutes: 0, now: hi, live: false };
  builds.push({
    name: dist,
    tasks: tasks.length,
    blocks: units.reduce((n, u) => n + u.blocks.length, 0),
    run: (/** @type {string} */ q) => {
      let matched = 0;
      for (const t of tasks) {
        const r = sc.runScanTask({ spec: { text: q, args: {}, ctx, limits: rt.DEFAULT_LIMITS }, repoName: 'r', units: t, deadline: Date.now() + 600_000 });
        if (r.warnings.length > 0) throw new Error(`${q}: ${r.warnings[0]}`);
        matched += r.matched;
      }
      return matched;
    },
  });
}
const repeat = Number(values.repeat);
process.stdout.write(`${files.length} segment files, ${builds[0].blocks} blocks, ${builds[0].tasks} tasks of ${values['task-mb']} MB; ${builds.map((b, i) => `${'AB'[i]} = ${b.name}`).join(', ')}; best CPU ms of ${repeat}\n`);
for (const q of positionals) {
  const best = builds.map(() => Infinity);
  const matched = builds.map(() => -1);
  const runs = builds.map(() => /** @type {number[]} */ ([]));
  for (let r = 0; r < Number(values.warmup); r++) for (const b of builds) b.run(q);
  for (let r = 0; r < repeat; r++) {
    builds.forEach((b, i) => {
      const c0 = process.cpuUsage();
      matched[i] = b.run(q);
      const c = process.cpuUsage(c0);
      best[i] = Math.min(best[i], (c.user + c.system) / 1000);
      runs[i].push((c.user + c.system) / 1000);
    });
  }
  const same = new Set(matched).size === 1 ? String(matched[0]) : `DIFFER ${matched.join(' vs ')}`;
  const spread = (/** @type {number} */ i) => {
    const xs = runs[i].slice().sort((x, y) => x - y);
    return ` (p10 ${xs[Math.floor(xs.length * 0.1)].toFixed(1)}, median ${xs[Math.floor(xs.length / 2)].toFixed(1)})`;
  };
  process.stdout.write(`  ${q.padEnd(50)} ${best.map((x, i) => `${'AB'[i]} ${x.toFixed(1).padStart(7)} ms${values.spread ? spread(i) : ''}`).join('  ')}${best.length > 1 ? `  ${(best[0] / Math.max(best[1], 0.001)).toFixed(2)}x` : ''}  ${same}\n`);
}
