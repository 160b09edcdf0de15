#!/usr/bin/env node
/**
 * A query's first-round task (scan.ts) over the segment files of a real data dir, in this process,
 * one or two builds alternating call by call, the posted form included: the units as the executor
 * makes them (segmentRefs, cutIntoTasks of --task-mb, flattened into one task), toWire, the
 * structured clone the post makes, and the task on the thread's side (pruneScanPacked where the
 * build has it, else pruneScanTask after fromWire). CPU ms per call: the median of calls 2-6
 * (what bench/peers/ask.mjs times after its warm-up is about as cold), of the later half, and the
 * minimum; and the blocks kept (or rows matched with --scan), which must agree.
 *
 *   node bench/scan/first-round.mjs --repo DATA/segments/<repo id> [--a DIST] [--b DIST] [--calls 40] [--scan] [QUERY]
 *
 * Without --scan the task lists the blocks its filters let through (scanBytes -1); with it, it also
 * scans them when they fit one task, as a rare token's does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { a: { type: 'string', default: 'dist' }, b: { type: 'string' }, repo: { type: 'string' }, calls: { type: 'string', default: '40' }, 'task-mb': { type: 'string', default: '16' }, scan: { type: 'boolean', default: false } } });
if (values.repo === undefined) {
  process.stderr.write('Usage: node bench/scan/first-round.mjs --repo DATA/segments/<repo id> [--a DIST] [--b DIST] [--calls N] [--scan] [QUERY]\n');
  process.exit(2);
}
const query = positionals[0] ?? 'zqxwrare7';
const files = readdirSync(values.repo, { recursive: true, encoding: 'utf8' })
  .filter((p) => p.endsWith('.seg'))
  .map((p) => join(/** @type {string} */ (values.repo), p));

/** @param {string} dist */
async function build(dist) {
  // The query string makes each build's modules its own (two builds, two module graphs).
  const load = (/** @type {string} */ p) => import(`${pathToFileURL(join(resolve(dist), p)).href}?${dist}`);
  const sf = await load('segments/segment-file.js');
  const sc = await load('query/scan.js');
  const ex = await load('query/executor.js');
  const rt = await load('query/runtime.js');
  const wire = await load('workers/scan-wire.js');
  let lo = Infinity;
  let hi = -Infinity;
  let blocks = 0;
  const units = files.map((p) => {
    const s = sf.parseSegment(readFileSync(p), p);
    const r = sc.segmentRefs(s.blocks);
    [lo, hi, blocks] = [Math.min(lo, r.minTs), Math.max(hi, r.maxTs), blocks + r.refs.length];
    return { kind: 'seg', path: p, partition: s.meta.partition, tags: s.meta.tags, blocks: r.refs };
  });
  const ctx = { start: lo - 60_000, end: hi + 60_000, timeZoneOffsetMinutes: 0, now: hi, live: false };
  const packed = typeof sc.pruneScanPacked === 'function';
  return {
    name: dist,
    blocks,
    call() {
      const task = { spec: { text: query, args: {}, ctx, limits: rt.DEFAULT_LIMITS }, repoName: 'r', units: ex.cutIntoTasks(units, Number(values['task-mb']) * 1e6).flat(), deadline: Date.now() + 600_000, scanBytes: values.scan ? 16e6 : -1 };
      const posted = wire.toWire(task);
      const r = packed ? sc.pruneScanPacked(structuredClone(posted, { transfer: [posted.refs.buffer] })) : sc.pruneScanTask(wire.fromWire(structuredClone(posted)));
      return 'kept' in r ? r.kept.reduce((/** @type {number} */ n, /** @type {number[] | null} */ k) => n + (k?.length ?? 0), 0) : r.scanned.matched;
    },
  };
}

const builds = [];
for (const dist of [values.a, values.b]) if (dist !== undefined) builds.push(await build(dist));
const times = builds.map(() => /** @type {number[]} */ ([]));
const answers = builds.map(() => -1);
for (let c = 0; c < Number(values.calls); c++) {
  builds.forEach((b, i) => {
    const c0 = process.cpuUsage();
    answers[i] = b.call();
    const d = process.cpuUsage(c0);
    times[i].push((d.user + d.system) / 1000);
  });
}
const median = (/** @type {number[]} */ xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? NaN;
process.stdout.write(`${files.length} segment files, ${builds[0]?.blocks} blocks, \`${query}\`${values.scan ? ' (scanned)' : ''}; CPU ms a call: calls 2-6 / later half / min\n`);
builds.forEach((b, i) => {
  const t = times[i];
  process.stdout.write(`  ${'AB'[i]} ${b.name.padEnd(24)} ${median(t.slice(1, 6)).toFixed(3)} / ${median(t.slice(Math.floor(t.length / 2))).toFixed(3)} / ${Math.min(...t).toFixed(3)}  ${values.scan ? 'rows' : 'blocks kept'} ${answers[i]}\n`);
});
if (builds.length === 2 && answers[0] !== answers[1]) {
  process.stderr.write('the builds disagree\n');
  process.exitCode = 1;
}
