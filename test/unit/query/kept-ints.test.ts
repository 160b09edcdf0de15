/**
 * KeptInts: a block's integer columns decoded once and kept for numeric ranges; columns with a
 * value that is not a 32-bit integer are not kept; the bound holds; a scan answers a range the
 * same from kept values as from the deltas and as the per-event path.
 */
import t from 'tap';
import { keptInts, runScanTask } from '../../../src/query/scan.js';
import { DEFAULT_LIMITS } from '../../../src/query/runtime.js';
import { KeptInts } from '../../../src/query/kept-ints.js';
import { encodeNumbers } from '../../../src/segments/columns.js';
import { readSegmentInfo } from '../../../src/segments/catalog.js';
import { createLogger } from '../../../src/lib/logger.js';
import { makeEvents, segMeta, tempDir, writeSegment } from '../segments/helpers.js';

t.test('columns decoded once per block; not kept past 32 bits; the bound lets the least recently used go', async (t) => {
  const kept = new KeptInts(9_000);
  const values = Array.from({ length: 1_000 }, (_, i) => (i * 7919) % 100_003 - 50_000);
  const col = encodeNumbers(values);
  const a = kept.block('/s/one.seg', 100, 5_000);
  t.equal(a.values('size', col, values.length), null, 'the first use: not decoded (the caller walks the deltas)');
  t.equal(a.held('size'), undefined, 'nor held');
  const first = a.values('size', col, values.length);
  t.equal(a.held('size'), first, 'the second: decoded and held');
  t.same(Array.from(first ?? []), values, 'the decoded values');
  t.equal(kept.block('/s/one.seg', 100, 5_000).values('size', encodeNumbers([1]), values.length), first, 'asked again: the kept array, the column not read');
  t.equal(kept.block('/s/one.seg', 100, 5_001).values('size', col, values.length), null, 'another stored length: a first use again');
  const twice = (path: string, name: string, c: typeof col, n: number): Int32Array | null => {
    kept.block(path, 200, 5_000).values(name, c, n);
    return kept.block(path, 200, 5_000).values(name, c, n);
  };
  const wide = encodeNumbers([1, 2 ** 31, 3]);
  t.equal(twice('/s/one.seg', 'big', wide, 3), null, 'a value past 32 bits: not kept');
  t.equal(kept.block('/s/one.seg', 200, 5_000).values('big', wide, 3), null, 'and asked again, still null');
  t.equal(kept.block('/s/one.seg', 200, 5_000).held('big'), undefined, 'nor held');
  t.same(Array.from(twice('/s/one.seg', 'neg', encodeNumbers([-(2 ** 31), 2 ** 31 - 1, -0]), 3) ?? []), [-(2 ** 31), 2 ** 31 - 1, 0], 'the ends of 32 bits are kept');
  twice('/s/two.seg', 'size', col, values.length);
  t.ok(kept.size.bytes <= 9_000, `the bound holds (${kept.size.bytes} bytes, ${kept.size.blocks} blocks)`);
  kept.clear();
  t.same(kept.size, { bytes: 0, blocks: 0 });
});

t.test('a range asked again answers from the kept values as the deltas and the per-event path do', async (t) => {
  const dir = await tempDir(t);
  const w = await writeSegment(dir, segMeta('ints'), Array.from({ length: 3 }, (_, b) => makeEvents(700, b * 1000, b * 700)), true);
  const refs = (await readSegmentInfo(w.path, createLogger('error'), Date.now())).blocks;
  const ctx = { start: 0, end: 2_000_000_000_000, timeZoneOffsetMinutes: 0, now: 2_000_000_000_000, live: false };
  const scan = (text: string, perEvent = false): ReturnType<typeof runScanTask> =>
    runScanTask({ spec: { text, args: {}, ctx, limits: DEFAULT_LIMITS }, repoName: 'r', units: [{ kind: 'seg', path: w.path, partition: 3, tags: {}, blocks: refs }], deadline: Date.now() + 60_000, perEvent });
  keptInts.clear();
  for (const q of ['seq > 350 | count()', 'seq < 1200 | count()', 'seq >= 700 | seq <= 1399 | count()', 'seq > 2.5 | count()', 'seq <= -1 | count()', 'seq > 99999 | count()', 'seq > 3000000000 | count()', 'seq >= -3000000000 | count()', 'seq < 2147483648 | count()', 'even=yes | seq > 350 | count()', 'seq < 1500 | even=yes | seq >= 100 | top(five)']) {
    const general = scan(q, true);
    const first = scan(q);
    const second = scan(q);
    const again = scan(q);
    t.same(first.state, general.state, `${q}: the column path as the per-event path`);
    t.same(second.state, general.state, `${q}: asked again, the column decoded and kept`);
    t.same(again.state, general.state, `${q}: and again, from the kept values`);
  }
  t.ok(keptInts.size.blocks > 0, 'blocks were kept');
  keptInts.clear();
});
