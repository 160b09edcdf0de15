import t from 'tap';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SegmentCatalog } from '../../../src/segments/catalog.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { groupSection, readSummary, type IngestRecord, type RecordSummary } from '../../../src/events/index.js';
import { PartitionDigester, type BlockPart } from '../../../src/digest/index.js';
import { ManualClock } from '../../../src/lib/clock.js';
import { WorkerPool } from '../../../src/workers/pool.js';
import { openQueue, readAll } from '../queue/helpers.js';
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

// --- block parts: views of live records, copies otherwise (ownSection) ---------------------------

/** The record in a buffer of its own (as a live record arrives: the worker's transferred buffer). */
function standalone(payload: Buffer): Buffer {
  return Buffer.from(payload.buffer.slice(payload.byteOffset, payload.byteOffset + payload.byteLength) as ArrayBuffer);
}

const owns = (b: Uint8Array): boolean => b.byteOffset === 0 && b.byteLength === b.buffer.byteLength;

/** The parts held in memory for datasource `ds` of repository "sandbox". */
function partsOf(d: PartitionDigester, ds: string): BlockPart[] {
  return d.memory('sandbox').find((m) => m.ds === ds)?.parts ?? [];
}

/** Share of the record that group `g`'s section takes. */
const share = (payload: Buffer, summary: RecordSummary, g: number): number => groupSection(payload, summary, g).byteLength / payload.byteLength;

const many = (prefix: string, n: number): ReturnType<typeof ev>[] => Array.from({ length: n }, (_, i) => ev(`${prefix}${i}`));

t.test('a live single-datasource record: its part is a view of the record, not a copy', async (t) => {
  const dir = await tempDir(t);
  const { d } = digester(new SegmentCatalog(dir), settings(dir, { blockTargetBytes: 1e9 }));
  const [summary, slab] = args(record([group('dsA', many('v', 20))]));
  const payload = standalone(slab);
  t.ok(owns(payload) && share(payload, summary, 0) >= 0.9, `setup: a buffer of its own, the section ${(share(payload, summary, 0) * 100).toFixed(1)} % of it`);
  d.process(0, 100, summary, payload);
  const [part] = partsOf(d, 'dsA');
  t.equal(part?.events.buffer, payload.buffer, 'the same ArrayBuffer: no copy');
  t.ok(Buffer.from(part!.events).equals(groupSection(payload, summary, 0)), 'exactly the group\'s section');
  await d.drain();
  t.strictSame((await storedEvents(dir)).map((e) => e.rawstring.split(' ')[0]), many('v', 20).map((e) => e.rawstring.split(' ')[0]));
});

t.test('a record that is a view into a larger buffer (a replay) gets parts copied out of it', async (t) => {
  const dir = await tempDir(t);
  const { d } = digester(new SegmentCatalog(dir), settings(dir, { blockTargetBytes: 1e9 }));
  const [summary, slab] = args(record([group('dsA', many('r', 20))]));
  const file = Buffer.concat([Buffer.alloc(4096, 0x11), slab, Buffer.alloc(4096, 0x22)]);
  const payload = file.subarray(4096, 4096 + slab.length);
  t.ok(share(payload, summary, 0) >= 0.9, 'setup: the section is nearly all of the record');
  d.process(0, 100, summary, payload);
  const [part] = partsOf(d, 'dsA');
  t.not(part!.events.buffer, file.buffer, 'not a view into the file');
  t.ok(owns(part!.events), 'a standalone copy: pins no more than the section');
  t.ok(Buffer.from(part!.events).equals(groupSection(payload, summary, 0)), 'the same bytes');
  file.fill(0); // the file buffer is reused or dropped: the part must not care
  await d.drain();
  t.strictSame((await storedEvents(dir)).map((e) => e.rawstring.split(' ')[0]), many('r', 20).map((e) => e.rawstring.split(' ')[0]));
});

t.test('records replayed from a real queue file are copied out of it', async (t) => {
  const dir = await tempDir(t);
  const { q } = await openQueue(join(dir, 'queue'));
  t.teardown(() => q.close());
  const recs = [record([group('dsA', many('q0-', 20))]), record([group('dsA', many('q1-', 30))])];
  for (const rec of recs) await q.append(0, args(rec)[1]);
  const back = await readAll(q, 0);
  t.equal(back.length, 2);
  t.equal(back[0]!.payload.buffer, back[1]!.payload.buffer, 'setup: the replayed records are views into one file buffer');
  const segs = join(dir, 'segments');
  const { d } = digester(new SegmentCatalog(segs), settings(segs, { blockTargetBytes: 1e9 }));
  for (const r of back) d.process(r.offset, r.nextOffset, readSummary(r.payload), r.payload);
  const parts = partsOf(d, 'dsA');
  t.equal(parts.length, 2);
  t.ok(parts.every((p) => p.events.buffer !== back[0]!.payload.buffer && owns(p.events)), 'each part a standalone copy');
  await d.drain();
  t.strictSame(keysOf(await storedEvents(segs)), expectedKeys(back.map((r, i) => ({ offset: r.offset, rec: recs[i]! }))));
});

t.test('a multi-datasource record: copies unless one group is at least 90 % of the record', async (t) => {
  const dir = await tempDir(t);
  const { d } = digester(new SegmentCatalog(dir), settings(dir, { blockTargetBytes: 1e9 }));

  // Two groups of the same size: neither is 90 %; both copied (a view would drag the other along).
  const [s1, slab1] = args(record([group('dsA', many('a', 10)), group('dsB', many('b', 10))]));
  const p1 = standalone(slab1);
  t.ok(share(p1, s1, 0) < 0.9 && share(p1, s1, 1) < 0.9, 'setup: neither group is 90 %');
  d.process(0, 100, s1, p1);
  for (const [ds, g] of [['dsA', 0], ['dsB', 1]] as const) {
    const [part] = partsOf(d, ds);
    t.not(part!.events.buffer, p1.buffer, `${ds}: not a view of the record`);
    t.ok(owns(part!.events), `${ds}: a standalone copy`);
    t.ok(Buffer.from(part!.events).equals(groupSection(p1, s1, g)), `${ds}: the group's bytes`);
  }

  // One large group and a tiny one: the large one is a view, the tiny one a copy.
  const [s2, slab2] = args(record([group('dsC', many('c', 200)), group('dsD', [ev('d0')])]));
  const p2 = standalone(slab2);
  t.ok(share(p2, s2, 0) >= 0.9, `setup: dsC is ${(share(p2, s2, 0) * 100).toFixed(1)} % of the record`);
  d.process(100, 200, s2, p2);
  t.equal(partsOf(d, 'dsC')[0]!.events.buffer, p2.buffer, 'dsC: a view of the record');
  const tiny = partsOf(d, 'dsD')[0]!;
  t.not(tiny.events.buffer, p2.buffer, 'dsD: not a view (it would pin the whole record)');
  t.ok(owns(tiny.events) && Buffer.from(tiny.events).equals(groupSection(p2, s2, 1)), 'dsD: a standalone copy of its bytes');
  await d.drain();
  t.strictSame(
    keysOf(await storedEvents(dir)),
    expectedKeys([
      { offset: 0, rec: record([group('dsA', many('a', 10)), group('dsB', many('b', 10))]) },
      { offset: 100, rec: record([group('dsC', many('c', 200)), group('dsD', [ev('d0')])]) },
    ]),
  );
});

/**
 * Live records (views), a dominant-group record (a view and a copy), small records (slab: copies):
 * blocks sealed by size and by drain hold every event once, with its raw string, through the
 * inline encoder and through the worker pool (which copies every part into one transferred buffer).
 */
t.test('blocks built from view parts hold exactly the right events (inline and worker pool)', async (t) => {
  const pool = new WorkerPool({ threads: 1, inlineBlockBytes: 0 });
  t.teardown(() => pool.close());
  for (const [name, encoder] of [['inline', undefined], ['worker pool', pool]] as const) {
    const dir = await tempDir(t);
    const cat = new SegmentCatalog(dir);
    const s = settings(dir, { blockTargetBytes: 8 * 1024 });
    const fatal: Error[] = [];
    const d =
      encoder === undefined
        ? digester(cat, s).d
        : new PartitionDigester(0, 0, { catalog: cat, encoder, clock: new ManualClock(T0), logger: silentLogger, settings: s, onLatency: () => undefined, onFatal: (e) => fatal.push(e) });
    const work: { offset: number; rec: IngestRecord; live: boolean }[] = [];
    for (let i = 0; i < 24; i++) {
      const groups = i % 5 === 4 ? [group('dsA', many(`m${i}-`, 40)), group('dsB', [ev(`mb${i}`)])] : [group(i % 2 === 0 ? 'dsA' : 'dsB', many(`r${i}-`, i % 3 === 0 ? 1 : 12))];
      work.push({ offset: i * 10_000, rec: record(groups), live: i % 3 !== 0 });
    }
    const payloads = work.map((w) => {
      const [summary, slab] = args(w.rec);
      return { summary, payload: w.live ? standalone(slab) : slab };
    });
    let views = 0;
    work.forEach((w, i) => {
      const { summary, payload } = payloads[i]!;
      d.process(w.offset, w.offset + 10_000, summary, payload);
      views += d.memory('sandbox').flatMap((m) => m.parts).filter((p) => p.events.buffer === payload.buffer).length;
    });
    t.ok(views >= 10, `${name}: many parts are views of their records (${views} seen)`);
    await d.drain();
    t.strictSame(fatal, [], `${name}: no failure`);
    const rows = await storedEvents(dir);
    t.strictSame(keysOf(rows), expectedKeys(work), `${name}: every event stored once`);
    const raw = new Map(rows.map((r) => [`${r.ds}:${r.offset}:${r.index}`, r.rawstring]));
    let wrong = 0;
    for (const w of work) {
      let index = 0;
      for (const g of w.rec.groups) for (const e of g.events) if (raw.get(`${g.ds}:${w.offset}:${index++}`) !== e.rawstring) wrong++;
    }
    t.equal(wrong, 0, `${name}: every event has its own raw string`);
    t.ok((await readSegments(dir)).reduce((n, x) => n + x.seg.blocks.length, 0) > 2, `${name}: several blocks`);
  }
});

t.test('undurableBytes: the queue bytes of the records from the checkpoint on, as given per record (Kafka offsets count records)', async (t) => {
  const dir = await tempDir(t);
  const cat = new SegmentCatalog(dir);
  const { d, clock } = digester(cat, settings(dir, { flushBlockMs: 5000, blockTargetBytes: 1e9 }));
  // Kafka-like offsets (one per record), with each record's size given.
  d.process(0, 1, ...args(record([group('dsA', [ev('a')])])), 700);
  clock.advance(3000);
  d.process(1, 2, ...args(record([group('dsB', [ev('b')])])), 300);
  d.process(2, 3, ...args(record([group('dsA', [ev('a2')])])), 50);
  t.equal(d.undurableBytes(), 1050, 'nothing durable: every record read');
  clock.advance(2000);
  d.tick(); // dsA's block (5000 ms) is written, dsB's (2000 ms) is not
  await d.settled();
  t.equal(d.checkpoint(), 1, 'the checkpoint is dsB\'s first record');
  t.equal(d.undurableBytes(), 350, 'from the checkpoint on: records 1 and 2');
  clock.advance(3000);
  d.tick();
  await d.settled();
  t.equal(d.undurableBytes(), 0, 'all durable');
  d.process(3, 4, ...args(record([group('dsB', [ev('b2')])])));
  t.equal(d.undurableBytes(), 1, 'by default a record counts its offset span (the embedded queue\'s bytes)');
  await d.drain();
});
