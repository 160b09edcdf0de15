/**
 * KeptFrames: a query thread's small frames, checked and decompressed once, then served without
 * reading the file; large frames are not kept; the bound holds, least recently used first; a
 * scan answers the same with frames kept as when it read them, a text search too.
 */
import t from 'tap';
import type { Test } from 'tap';
import { closeSync, openSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { blockHeads, keptFrames, runScanTask } from '../../../src/query/scan.js';
import { codeRowsHeld } from '../../../src/query/columnar.js';
import { DEFAULT_LIMITS } from '../../../src/query/runtime.js';
import { KEPT_FRAME_MAX, KeptFrames } from '../../../src/query/kept-frames.js';
import { readSegmentInfo } from '../../../src/segments/catalog.js';
import { createLogger } from '../../../src/lib/logger.js';
import { makeEvents, segMeta, tempDir, writeSegment } from '../segments/helpers.js';

t.test('frames of a block by number; large ones not kept; the bound lets the least recently used go', async (t) => {
  const kept = new KeptFrames(10_700, 4_000);
  const a = kept.block('/s/one.seg', 100, 5_000);
  const b = kept.block('/s/one.seg', 9_000, 5_000);
  const pooled = Buffer.allocUnsafe(3_000).fill(7);
  a.put(0, pooled);
  t.not(a.get(0), pooled, 'a frame that shares its memory is copied');
  t.same(a.get(0), pooled, 'and kept as it was');
  t.equal(b.get(0), undefined, 'another block is another entry');
  a.put(1, Buffer.alloc(5_000));
  t.equal(a.get(1), undefined, 'a frame over the size for keeping is not kept');
  b.put(0, Buffer.alloc(3_000, 1));
  const c = kept.block('/s/two.seg', 100, 5_000);
  c.put(0, Buffer.alloc(3_000, 2));
  t.equal(kept.size.frames, 3, 'three frames of three blocks');
  t.ok(kept.block('/s/one.seg', 100, 5_000).get(0) !== undefined, 'a block asked for again is the most recently used');
  c.put(1, Buffer.alloc(3_000, 3));
  t.equal(kept.size.frames, 3, 'the bound (10,700 bytes: three blocks and their frames) holds three: one block let go');
  t.ok(kept.block('/s/one.seg', 100, 5_000).get(0) !== undefined, 'the one used last is kept');
  t.equal(kept.block('/s/one.seg', 9_000, 5_000).get(0), undefined, 'the least recently used was let go');
  t.ok(kept.block('/s/two.seg', 100, 5_000).get(1) !== undefined, 'the block being added to stays');
  t.equal(kept.block('/s/one.seg', 100, 5_001).get(0), undefined, 'another stored length: not the frames kept');
  t.equal(kept.block('/s/one.seg', 100, 5_000).get(0), undefined, 'and those are let go');
  for (let k = 0; k < 100; k++) kept.block('/s/big.seg', k, 5_000);
  t.ok(kept.size.bytes <= 10_700, 'entries without frames count too: the bound holds');
  kept.clear();
  t.same(kept.size, { bytes: 0, frames: 0 });
});

/** A segment of three blocks of `n` events each, and a scan of all of it. */
async function segmentScan(t: Test, name: string, n: number): Promise<{ path: string; scan: (text: string) => ReturnType<typeof runScanTask> }> {
  const dir = await tempDir(t);
  const w = await writeSegment(dir, segMeta(name), Array.from({ length: 3 }, (_, b) => makeEvents(n, b * 1000, b * n)), true);
  const refs = (await readSegmentInfo(w.path, createLogger('error'), Date.now())).blocks;
  const ctx = { start: 0, end: 2_000_000_000_000, timeZoneOffsetMinutes: 0, now: 2_000_000_000_000, live: false };
  const scan = (text: string): ReturnType<typeof runScanTask> => runScanTask({ spec: { text, args: {}, ctx, limits: DEFAULT_LIMITS }, repoName: 'r', units: [{ kind: 'seg', path: w.path, partition: 3, tags: {}, blocks: refs }], deadline: Date.now() + 60_000 });
  return { path: w.path, scan };
}

t.test('a scan reads its small frames once; asked again it answers the same without the file', async (t) => {
  const { path, scan } = await segmentScan(t, 'kept', 40);
  keptFrames.clear();
  const q = 'seq > 50 | top(five)';
  const first = scan(q);
  t.ok(first.blocksRead > 0, 'blocks were read');
  t.ok(keptFrames.size.frames > 0, 'their small frames kept');
  await rename(path, `${path}.moved`);
  const again = scan(q);
  t.same(again.state, first.state, 'the same answer');
  t.equal(again.matched, first.matched);
  t.throws(() => scan('seq > 50 | @rawstring=*hello* | count()'), { code: 'ENOENT' }, 'what is not kept is read from the file');
  keptFrames.clear();
});

t.test('a text search keeps small frames too, and answers the same from them as from the file', async (t) => {
  const { scan } = await segmentScan(t, 'kept-text', 60);
  for (const q of ['f15 | count()', 'web3 | groupBy(five)', '/f1[0-9]/ | count()', 'yes | count(seq, distinct=true)']) {
    keptFrames.clear();
    const cold = scan(q);
    t.ok(cold.blocksRead > 0 && keptFrames.size.frames > 0, `${q}: blocks read, their small frames kept`);
    const warm = scan(q);
    t.same(warm.state, cold.state, `${q}: the same answer with frames kept`);
    t.equal(warm.matched, cold.matched);
    t.ok(cold.matched > 0, `${q}: matches some events`);
  }
  keptFrames.clear();
});

t.test('columns decoded from kept frames are held; a dictionary\'s codes copied out of a frame too large to keep, for single-column reads only', async (t) => {
  const kept = new KeptFrames(100_000, 4_000);
  const a = kept.block('/s/one.seg', 100, 5_000, true);
  const small = Buffer.alloc(1_000, 1);
  a.put(0, small);
  const before = kept.size.bytes;
  const col = { e: 'u', b: a.get(0)!.subarray(0, 10), l: a.get(0)!.subarray(10, 20) };
  a.keepColumn!(3, col, 0);
  t.equal(kept.block('/s/one.seg', 100, 5_000).column!(3), col, 'the decoded column is held with the block\'s frames');
  t.ok(kept.size.bytes > before && kept.size.bytes < before + 500, 'charged an object\'s cost (a view of a frame held)');
  const copied = { e: 'k', i: Buffer.alloc(2_000), w: 1 };
  const b = kept.block('/s/one.seg', 9_000, 5_000, true);
  t.equal(b.copiesColumns, true);
  b.keepColumn!(4, copied, 2_000);
  t.ok(kept.size.bytes >= before + 2_000, 'a column with bytes of its own is charged them');
  t.equal(kept.block('/s/one.seg', 100, 5_000).copiesColumns, false, 'a text search\'s blocks copy none');
  t.equal(kept.block('/s/one.seg', 100, 5_001).column!(3), undefined, 'another stored length: nothing held');
  kept.clear();
  t.same(kept.size, { bytes: 0, frames: 0 });
});

t.test('a filter and a group on dictionary fields in a frame too large to keep: read once, then answered from the held codes, the same as per event', async (t) => {
  // 2,000 events with 24 dictionary fields of one-byte codes: their small columns share frames
  // of up to 32 KiB, past the 16 KiB frames are kept up to.
  const dir = await tempDir(t);
  const evs = makeEvents(2_000).map((e, i) => ({ ...e, fields: { ...e.fields, ...Object.fromEntries(Array.from({ length: 24 }, (_, k) => [`d${k}`, `v${(i * (k + 1)) % 7}`])) } }));
  const w = await writeSegment(dir, segMeta('wide-dicts'), [evs.slice(0, 1_000), evs.slice(1_000)], true);
  const refs = (await readSegmentInfo(w.path, createLogger('error'), Date.now())).blocks;
  const ctx = { start: 0, end: 2_000_000_000_000, timeZoneOffsetMinutes: 0, now: 2_000_000_000_000, live: false };
  const scan = (text: string, perEvent = false): ReturnType<typeof runScanTask> =>
    runScanTask({ spec: { text, args: {}, ctx, limits: DEFAULT_LIMITS }, repoName: 'r', units: [{ kind: 'seg', path: w.path, partition: 3, tags: {}, blocks: refs }], deadline: Date.now() + 60_000, perEvent });
  // The fields' codes are in frames past the size for keeping.
  const fd = openSync(w.path, 'r');
  const heads = refs.map((b) => blockHeads.get(() => fd, w.path, b, false)!);
  closeSync(fd);
  const frameOf = (name: string): number => heads[0]!.dir.frames[heads[0]!.dir.columns.find((c) => c.name === name)!.frame]!.plain;
  t.ok(['d0', 'd3', 'd4', 'd23'].every((name) => frameOf(name) > KEPT_FRAME_MAX), 'the dictionaries\' frames are too large to keep');
  for (const q of ['d3=v2 | groupBy(d4)', 'd4!=v5 | top(d3)', 'd0=v1 d23=v3 | count()']) {
    keptFrames.clear();
    const oracle = scan(q, true);
    keptFrames.clear();
    const cold = scan(q);
    t.ok(keptFrames.size.bytes > 2 * 2 * 1_000, `${q}: the two blocks' codes copied and charged (${JSON.stringify(keptFrames.size)})`);
    await rename(w.path, `${w.path}.moved`);
    const warm = scan(q);
    await rename(`${w.path}.moved`, w.path);
    t.same(cold.state, oracle.state, `${q}: the column path answers as per event`);
    t.same(warm.state, cold.state, `${q}: asked again without the file, the same answer from the held codes`);
    t.equal(warm.matched, oracle.matched);
    t.ok(oracle.matched > 0, `${q}: matches some events`);
  }
  // A text search reads them again from the file (their frames are not kept, nor copies made for it).
  keptFrames.clear();
  scan('v3 | count()');
  await rename(w.path, `${w.path}.moved`);
  t.throws(() => scan('v3 | count()'), { code: 'ENOENT' }, 'a text search holds no copies');
  await rename(`${w.path}.moved`, w.path);
  keptFrames.clear();
});

t.test('a filter on a dictionary field over whole blocks of held codes: the rows of its one passing code, the same as per event', async (t) => {
  // Small dictionary columns (their frames kept, the codes held beside them): `d` of 7 values,
  // `g` of 3, `m` missing from every fourth event; some blocks partly out of the range.
  const dir = await tempDir(t);
  const evs = makeEvents(3_000).map((e, i) => {
    const fields: Record<string, string> = { ...e.fields, d: `v${(i * 5) % 7}`, g: `g${i % 3}` };
    if (i % 4 !== 1) fields['m'] = `m${i % 2}`;
    return { ...e, fields };
  });
  const w = await writeSegment(dir, segMeta('dict-rows'), [evs.slice(0, 1_000), evs.slice(1_000, 2_000), evs.slice(2_000)], true);
  const refs = (await readSegmentInfo(w.path, createLogger('error'), Date.now())).blocks;
  const scan = (text: string, perEvent = false, start = 0): ReturnType<typeof runScanTask> =>
    runScanTask({ spec: { text, args: {}, ctx: { start, end: 2_000_000_000_000, timeZoneOffsetMinutes: 0, now: 2_000_000_000_000, live: false }, limits: DEFAULT_LIMITS }, repoName: 'r', units: [{ kind: 'seg', path: w.path, partition: 3, tags: {}, blocks: refs }], deadline: Date.now() + 60_000, perEvent });
  keptFrames.clear();
  const before = codeRowsHeld();
  const queries = ['d=v2 | groupBy(g)', 'd=v6 | count()', 'd=nothing | count()', 'd!=v5 | top(g)', 'm=m1 | groupBy(d)', 'm!=m1 | count()', 'd=v3 g=g1 | groupBy(m)', 'g=g2 | count(d, distinct=true)'];
  for (const q of queries) {
    for (const start of [0, 1_700_000_004_000]) {
      const oracle = scan(q, true, start);
      t.ok(start > 0 || q.includes('nothing') || oracle.matched > 0, `${q}: matches some events`);
      for (let ask = 0; ask < 3; ask++) {
        const got = scan(q, false, start);
        t.same(got.state, oracle.state, `${q} from ${start}: ask ${ask} as the per-event path`);
        t.equal(got.matched, oracle.matched);
      }
    }
  }
  t.ok(codeRowsHeld() > before, `rows by code made for the held codes (${codeRowsHeld() - before} bytes)`);
  keptFrames.clear();
});
