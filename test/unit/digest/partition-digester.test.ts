import t from 'tap';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SegmentCatalog } from '../../../src/segments/catalog.js';
import { silentLogger } from '../../../src/lib/logger.js';
import type { IngestRecord } from '../../../src/events/index.js';
import { args, digester, ev, expectedKeys, group, keysOf, readSegments, record, settings, storedEvents, T0, tempDir } from './helpers.js';

t.test('events of two datasources are routed to separate blocks and segments', async (t) => {
  const dir = await tempDir(t);
  const cat = new SegmentCatalog(dir);
  const { d, fatal } = digester(cat, settings(dir), 5);
  const recs: { offset: number; rec: IngestRecord }[] = [
    { offset: 0, rec: record([group('dsA', [ev('a0'), ev('a1')], { host: 'a' }), group('dsB', [ev('b0')], { host: 'b' })]) },
    { offset: 1000, rec: record([group('dsB', [ev('b1')], { host: 'b' })]) },
    { offset: 2000, rec: record([group('dsA', [ev('a2')], { host: 'a' })]) },
  ];
  recs.forEach(({ offset, rec }, i) => d.process(offset, i < 2 ? recs[i + 1]!.offset : 3000, ...args(rec)));
  t.equal(d.processedEnd, 3000);
  t.equal(d.openBytes, 5 * 148);
  await d.drain();
  t.strictSame(fatal, []);
  t.equal(d.openBytes, 0);
  const segs = await readSegments(dir);
  t.equal(segs.length, 2);
  const a = segs.find((s) => s.seg.meta.ds === 'dsA')!;
  const b = segs.find((s) => s.seg.meta.ds === 'dsB')!;
  t.equal(a.path.startsWith(join(dir, 'sandbox', 'dsA') + '/'), true, 'A under <dir>/<repo>/<ds>');
  t.equal(b.path.startsWith(join(dir, 'sandbox', 'dsB') + '/'), true);
  t.strictSame(a.events.map((e) => [e.offset, e.index, e.rawstring.split(' ')[0]]), [
    [0, 0, 'a0'],
    [0, 1, 'a1'],
    [2000, 0, 'a2'],
  ]);
  t.strictSame(b.events.map((e) => [e.offset, e.index, e.rawstring.split(' ')[0]]), [
    [0, 2, 'b0'],
    [1000, 0, 'b1'],
  ]);
  t.match(a.seg.meta, { repo: 'sandbox', ds: 'dsA', tags: { host: 'a' }, partition: 5, createdAt: T0 });
  t.match(b.seg.meta, { repo: 'sandbox', ds: 'dsB', tags: { host: 'b' }, partition: 5 });
  t.equal(a.seg.blocks.length, 1, 'one block each');
  t.equal(b.seg.blocks.length, 1);
  t.not(a.seg.footer, null, 'drain closes every segment');
  t.not(b.seg.footer, null);
  t.equal(d.checkpoint(), 3000, 'all written: checkpoint = processedEnd');
  t.strictSame(cat.highWater(5, 'dsA'), { offset: 2000, index: 0 });
  t.strictSame(cat.highWater(5, 'dsB'), { offset: 1000, index: 0 });
  t.equal(cat.all().length, 2);
  t.ok(cat.all().every((s) => s.closed));
});

t.test('a block is sealed and written when it reaches blockTargetBytes', async (t) => {
  const dir = await tempDir(t);
  const cat = new SegmentCatalog(dir);
  const { d } = digester(cat, settings(dir, { blockTargetBytes: 2048 }));
  // 148 bytes per event: 13 events = 1924 < 2048, 14 = 2072 >= 2048.
  for (let i = 0; i < 13; i++) d.process(i * 100, (i + 1) * 100, ...args(record([group('dsA', [ev(`e${i}`)])])));
  await d.settled();
  t.equal(d.openBytes, 13 * 148);
  t.strictSame(await readSegments(dir), [], 'nothing written below the target');
  t.equal(d.checkpoint(), 0);
  d.process(1300, 1400, ...args(record([group('dsA', [ev('e13')])])));
  t.equal(d.openBytes, 0, 'sealed at once');
  t.equal(d.checkpoint(), 0, 'sealed but not yet durable');
  t.equal(d.pendingBytes(), 14 * 148);
  await d.settled();
  t.equal(d.pendingBytes(), 0);
  t.equal(d.checkpoint(), 1400);
  const segs = await readSegments(dir);
  t.equal(segs.length, 1);
  t.equal(segs[0]!.seg.footer, null, 'the segment stays open');
  t.equal(segs[0]!.seg.blocks.length, 1);
  t.match(segs[0]!.seg.blocks[0], { eventCount: 14, firstOffset: 0, firstIndex: 0, lastOffset: 1300, lastIndex: 0, minTs: T0, maxTs: T0 });
  t.strictSame(segs[0]!.events.map((e) => e.offset), Array.from({ length: 14 }, (_, i) => i * 100));
  t.strictSame(cat.highWater(0, 'dsA'), { offset: 1300, index: 0 });
  const info = cat.all()[0]!;
  t.equal(info.closed, false);
  t.equal(info.blocks.length, 1);

  // One big record: sealed after the whole group, as one block.
  d.process(1400, 1500, ...args(record([group('dsA', Array.from({ length: 20 }, (_, i) => ev(`big${i}`)))])));
  await d.settled();
  const after = await readSegments(dir);
  t.strictSame(after[0]!.seg.blocks.map((b) => b.eventCount), [14, 20]);
  t.strictSame(after[0]!.events.slice(14).map((e) => e.index), Array.from({ length: 20 }, (_, i) => i));
  await d.drain();
});

t.test('tick() seals a block older than flushBlockMs, and only that one', async (t) => {
  const dir = await tempDir(t);
  const cat = new SegmentCatalog(dir);
  const { d, clock } = digester(cat, settings(dir, { flushBlockMs: 5000, blockTargetBytes: 1e9 }));
  d.process(0, 100, ...args(record([group('dsA', [ev('a')])])));
  clock.advance(3000);
  d.process(100, 200, ...args(record([group('dsB', [ev('b')])])));
  clock.advance(1999);
  d.tick();
  await d.settled();
  t.strictSame(await readSegments(dir), [], 'A is 4999 ms old: not yet');
  t.equal(d.checkpoint(), 0);
  clock.advance(1);
  d.tick();
  await d.settled();
  let segs = await readSegments(dir);
  t.strictSame(segs.map((s) => s.seg.meta.ds), ['dsA'], 'A (5000 ms) sealed, B (2000 ms) not');
  t.equal(d.checkpoint(), 100, 'checkpoint moves to the oldest unwritten block (B)');
  t.equal(d.openBytes, 148);
  clock.advance(3000);
  d.tick();
  await d.settled();
  segs = await readSegments(dir);
  t.strictSame(segs.map((s) => s.seg.meta.ds).sort(), ['dsA', 'dsB']);
  t.equal(d.checkpoint(), 200);
  await d.drain();
});

t.test('tick() closes a segment open longer than maxSegmentOpenMs', async (t) => {
  const dir = await tempDir(t);
  const cat = new SegmentCatalog(dir);
  const { d, clock } = digester(cat, settings(dir, { flushBlockMs: 1000, maxSegmentOpenMs: 10_000, blockTargetBytes: 1e9 }));
  d.process(0, 100, ...args(record([group('dsA', [ev('a')])])));
  clock.advance(1000);
  d.tick(); // seals; the segment is created now (T0 + 1000)
  await d.settled();
  clock.advance(9999);
  d.tick();
  await d.settled();
  t.equal((await readSegments(dir))[0]!.seg.footer, null, 'open for 9999 ms: still open');
  clock.advance(1);
  d.tick();
  await d.settled();
  const segs = await readSegments(dir);
  t.not(segs[0]!.seg.footer, null, 'closed after 10000 ms');
  t.equal(segs[0]!.seg.footer!.closedAt, T0 + 11_000);
  t.equal(cat.all()[0]!.closed, true);
  // The next block goes into a new segment.
  d.process(100, 200, ...args(record([group('dsA', [ev('b')])])));
  await d.drain();
  t.equal((await readSegments(dir)).length, 2);
});

t.test('blocksPerSegment = 2: a segment is closed after 2 blocks, the next block starts a new file', async (t) => {
  const dir = await tempDir(t);
  const cat = new SegmentCatalog(dir);
  const { d } = digester(cat, settings(dir, { blocksPerSegment: 2, blockTargetBytes: 2048 }));
  for (let i = 0; i < 42; i++) d.process(i * 100, (i + 1) * 100, ...args(record([group('dsA', [ev(`e${i}`)])])));
  await d.settled();
  const segs = await readSegments(dir);
  t.equal(segs.length, 2, 'two segment files');
  const closed = segs.filter((s) => s.seg.footer !== null);
  const open = segs.filter((s) => s.seg.footer === null);
  t.equal(closed.length, 1);
  t.equal(open.length, 1);
  t.equal(closed[0]!.seg.blocks.length, 2);
  t.strictSame(closed[0]!.seg.footer!.blocks, closed[0]!.seg.blocks);
  t.equal(closed[0]!.seg.footer!.eventCount, 28);
  t.strictSame(closed[0]!.events.map((e) => e.offset), Array.from({ length: 28 }, (_, i) => i * 100));
  t.equal(open[0]!.seg.blocks.length, 1);
  t.strictSame(open[0]!.events.map((e) => e.offset), Array.from({ length: 14 }, (_, i) => (28 + i) * 100));
  t.equal(cat.all().length, 2);
  t.strictSame(cat.all().map((s) => s.closed).sort(), [false, true]);
  t.equal(d.checkpoint(), 4200);
  await d.drain();
  t.ok((await readSegments(dir)).every((s) => s.seg.footer !== null), 'drain closes the open one');
});

t.test('checkpoint() is the first offset of the oldest unwritten block', async (t) => {
  const dir = await tempDir(t);
  const cat = new SegmentCatalog(dir);
  const { d, clock } = digester(cat, settings(dir, { blockTargetBytes: 2048, flushBlockMs: 1000 }));
  t.equal(d.checkpoint(), 0, 'nothing processed');
  d.process(0, 100, ...args(record([group('dsA', [ev('a0')])])));
  t.equal(d.checkpoint(), 0);
  d.process(100, 200, ...args(record([group('dsB', [ev('b0')])])));
  t.equal(d.checkpoint(), 0);
  d.process(200, 300, ...args(record([group('dsA', Array.from({ length: 13 }, (_, i) => ev(`a${i + 1}`)))]))); // A reaches 2072: sealed
  t.equal(d.checkpoint(), 0, 'A sealed, not yet written');
  await d.settled();
  t.equal(d.checkpoint(), 100, 'A durable: B (from 100) is the oldest unwritten');
  d.process(300, 400, ...args(record([group('dsA', [ev('a14')])])));
  t.equal(d.checkpoint(), 100, 'a newer open block does not lower it');
  clock.advance(1000);
  d.tick();
  t.equal(d.checkpoint(), 100, 'B sealed, not yet written');
  await d.settled();
  t.equal(d.checkpoint(), 400, 'everything written: processedEnd');
  t.equal(d.processedEnd, 400);
  await d.drain(); // closes the two open segments
  t.equal(d.checkpoint(), 400);
});

t.test('a digester started at an offset ignores records below it; onLatency gets ack-to-digest time', async (t) => {
  const dir = await tempDir(t);
  const cat = new SegmentCatalog(dir);
  const { d, latencies } = digester(cat, settings(dir), 0, 500);
  t.equal(d.checkpoint(), 500);
  d.process(400, 500, ...args(record([group('dsA', [ev('old')])])));
  t.equal(d.openBytes, 0, 'below the start: ignored');
  t.strictSame(latencies, []);
  d.process(500, 600, ...args(record([group('dsA', [ev('new')])], 'sandbox', T0 - 250)));
  d.process(600, 700, ...args(record([group('dsA', [ev('future')])], 'sandbox', T0 + 50)));
  t.strictSame(latencies, [250, 0], 'now - at, never negative');
  d.process(550, 650, ...args(record([group('dsA', [ev('dup')])])));
  t.equal(d.openBytes, 2 * 148, 'a record below processedEnd is ignored');
  await d.drain();
  t.strictSame((await storedEvents(dir)).map((e) => e.offset), [500, 600]);
});

/** 60 records: every record has one dsA event; every third also two dsB events. */
function workload(): { offset: number; next: number; rec: IngestRecord }[] {
  const out: { offset: number; next: number; rec: IngestRecord }[] = [];
  for (let i = 0; i < 60; i++) {
    const groups = [group('dsA', [ev(`a${i}`)])];
    if (i % 3 === 0) groups.push(group('dsB', [ev(`b${i}.0`), ev(`b${i}.1`)]));
    out.push({ offset: i * 100, next: (i + 1) * 100, rec: record(groups) });
  }
  return out;
}

t.test('exactly once: a replay from 0 with the same catalog writes no event twice', async (t) => {
  const dir = await tempDir(t);
  const cat = new SegmentCatalog(dir);
  const s = settings(dir, { blockTargetBytes: 2048, blocksPerSegment: 2 });
  const work = workload();
  const first = digester(cat, s);
  for (const w of work) first.d.process(w.offset, w.next, ...args(w.rec));
  await first.d.settled();
  const partial = keysOf(await storedEvents(dir));
  // A: 60 events, 14 per block -> 4 blocks written (56), 4 open. B: 40 events, 14 per block
  // (7 records of 2) -> 2 blocks written (28), 12 open.
  t.equal(partial.length, 56 + 28, 'some blocks durable, some still open (lost in the "crash")');
  t.equal(first.d.checkpoint(), 4200, 'checkpoint = first offset of the oldest open block (B from record 42; A from 56)');

  const second = digester(cat, s);
  for (const w of work) second.d.process(w.offset, w.next, ...args(w.rec));
  await second.d.drain();
  t.strictSame(second.fatal, []);
  const rows = await storedEvents(dir);
  const keys = keysOf(rows);
  const want = expectedKeys(work.map((w) => ({ offset: w.offset, rec: w.rec })));
  t.equal(want.length, 100);
  t.equal(keys.length, 100, 'every event stored once');
  t.strictSame(keys, want, 'exactly the expected (ds, offset, index) set, no duplicates');
  t.equal(new Set(keys).size, keys.length);
  await first.d.drain(); // release the first digester's file handles (after the assertions)
});

t.test('exactly once after a crash: catalog reloaded from disk (open segments closed), replay from 0', async (t) => {
  const dir = await tempDir(t);
  const s = settings(dir, { blockTargetBytes: 2048, blocksPerSegment: 3 });
  const work = workload();
  const first = digester(new SegmentCatalog(dir), s);
  for (const w of work) first.d.process(w.offset, w.next, ...args(w.rec));
  await first.d.settled();
  t.equal((await storedEvents(dir)).length, 84);
  t.ok((await readSegments(dir)).some((x) => x.seg.footer === null), 'an open segment is left behind');

  const cat = await SegmentCatalog.load(dir, silentLogger, T0 + 1);
  t.ok((await readSegments(dir)).every((x) => x.seg.footer !== null), 'load closed the open segments');
  t.strictSame(cat.highWater(0, 'dsA'), { offset: 5500, index: 0 }, 'A: 56 events durable, the last at record 55');
  t.strictSame(cat.highWater(0, 'dsB'), { offset: 3900, index: 2 }, 'B: 28 events durable, the last at record 39');
  const second = digester(cat, s);
  for (const w of work) second.d.process(w.offset, w.next, ...args(w.rec));
  await second.d.drain();
  const keys = keysOf(await storedEvents(dir));
  t.strictSame(keys, expectedKeys(work.map((w) => ({ offset: w.offset, rec: w.rec }))));
  t.equal(keys.length, 100);
  t.equal(second.d.checkpoint(), 6000);
  await first.d.drain(); // release the crashed digester's file handles (after the assertions)
});

t.test('drain() writes every open block and closes every segment', async (t) => {
  const dir = await tempDir(t);
  const cat = new SegmentCatalog(dir);
  const { d } = digester(cat, settings(dir, { blockTargetBytes: 1e9 }));
  for (let i = 0; i < 10; i++) d.process(i * 100, (i + 1) * 100, ...args(record([group(`ds${i % 3}`, [ev(`e${i}`)])])));
  t.strictSame(await readSegments(dir), []);
  await d.drain();
  const segs = await readSegments(dir);
  t.strictSame(segs.map((s) => s.seg.meta.ds).sort(), ['ds0', 'ds1', 'ds2']);
  t.ok(segs.every((s) => s.seg.footer !== null && s.seg.blocks.length === 1));
  t.strictSame(segs.map((s) => s.events.length).sort(), [3, 3, 4]);
  t.equal(d.checkpoint(), 1000);
  t.equal(d.openBytes, 0);
  t.equal(d.pendingBytes(), 0);
  await d.drain();
  t.equal((await readSegments(dir)).length, 3, 'a second drain writes nothing');
});

t.test('a segment write failure is fatal: onFatal once, nothing later written, checkpoint held', async (t) => {
  const dir = await tempDir(t);
  const blocker = join(dir, 'not-a-dir');
  await writeFile(blocker, 'x');
  const cat = new SegmentCatalog(blocker);
  const { d, fatal } = digester(cat, settings(join(blocker, 'segments'), { blockTargetBytes: 2048 }));
  for (let i = 0; i < 28; i++) d.process(i * 100, (i + 1) * 100, ...args(record([group('dsA', [ev(`e${i}`)])])));
  await d.settled();
  t.equal(fatal.length, 1, 'one fatal report for two sealed blocks');
  t.match(fatal[0], { code: 'ENOTDIR' });
  t.equal(d.checkpoint(), 0, 'nothing durable: checkpoint stays at the first block');
  t.equal(d.pendingBytes(), 28 * 148);
  t.equal(cat.highWater(0, 'dsA'), null);
  t.strictSame(await readdir(dir), ['not-a-dir']);
});
