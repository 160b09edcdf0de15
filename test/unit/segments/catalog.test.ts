import t from 'tap';
import { copyFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { listSegmentFiles, positionAfter, SegmentCatalog } from '../../../src/segments/catalog.js';
import { parseSegment } from '../../../src/segments/segment-file.js';
import { silentLogger, type Logger } from '../../../src/lib/logger.js';
import { makeEvents, segMeta, tempDir, writeSegment } from './helpers.js';

function recordingLogger(): { logger: Logger; errors: { msg: string; fields?: Record<string, unknown> }[] } {
  const errors: { msg: string; fields?: Record<string, unknown> }[] = [];
  return { logger: { ...silentLogger, error: (msg, fields) => errors.push(fields === undefined ? { msg } : { msg, fields }) }, errors };
}

/** Writes an open segment (no footer) at `dest` via a staging writer that is then closed elsewhere. */
async function openSegmentAt(staging: string, dest: string, id: string, meta: Parameters<typeof segMeta>[1], blocks: ReturnType<typeof makeEvents>[], tornBytes = 0): Promise<void> {
  const w = await writeSegment(staging, segMeta(id, meta), blocks, false);
  const bytes = await readFile(w.path);
  await w.close(0);
  await mkdir(join(dest, '..'), { recursive: true });
  await writeFile(dest, tornBytes > 0 ? bytes.subarray(0, bytes.length - tornBytes) : bytes);
}

t.test('positionAfter orders by offset, then index', async (t) => {
  t.equal(positionAfter({ offset: 10, index: 0 }, { offset: 9, index: 5 }), true);
  t.equal(positionAfter({ offset: 10, index: 3 }, { offset: 10, index: 2 }), true);
  t.equal(positionAfter({ offset: 10, index: 2 }, { offset: 10, index: 2 }), false, 'equal is not after');
  t.equal(positionAfter({ offset: 10, index: 1 }, { offset: 10, index: 2 }), false);
  t.equal(positionAfter({ offset: 9, index: 99 }, { offset: 10, index: 0 }), false);
});

t.test('noteDurable keeps the highest position per (partition, datasource)', async (t) => {
  const cat = new SegmentCatalog('/nowhere');
  t.equal(cat.highWater(0, 'a'), null);
  cat.noteDurable(0, 'a', { offset: 100, index: 2 });
  cat.noteDurable(0, 'a', { offset: 50, index: 9 });
  cat.noteDurable(0, 'a', { offset: 100, index: 1 });
  t.strictSame(cat.highWater(0, 'a'), { offset: 100, index: 2 });
  cat.noteDurable(0, 'a', { offset: 100, index: 3 });
  t.strictSame(cat.highWater(0, 'a'), { offset: 100, index: 3 });
  t.equal(cat.highWater(1, 'a'), null, 'per partition');
  t.equal(cat.highWater(0, 'b'), null, 'per datasource');
  t.strictSame(cat.all(), []);
});

t.test('SegmentCatalog.load over <dir>/<repo>/<ds>/*.seg closes open segments and knows the high-water marks', async (t) => {
  const root = await tempDir(t);
  const dir = join(root, 'segments');
  const staging = join(root, 'staging');
  // repo sandbox, ds A, partition 3: two closed segments and one open one.
  const a1 = await writeSegment(join(dir, 'sandbox', 'dsA'), segMeta('a1'), [makeEvents(9, 0), makeEvents(6, 400)], true);
  const a2 = await writeSegment(join(dir, 'sandbox', 'dsA'), segMeta('a2'), [makeEvents(3, 800)], true);
  await openSegmentAt(staging, join(dir, 'sandbox', 'dsA', 'a3.seg'), 'a3', {}, [makeEvents(4, 1000), makeEvents(5, 1500)]);
  // Same ds from partition 4 (its own high-water mark).
  const a4 = await writeSegment(join(dir, 'sandbox', 'dsA'), segMeta('a4', { partition: 4 }), [makeEvents(7, 99_000)], true);
  // ds B, partition 3: an open segment with a torn last block.
  await openSegmentAt(staging, join(dir, 'sandbox', 'dsB', 'b1.seg'), 'b1', { ds: 'dsB' }, [makeEvents(8, 0), makeEvents(8, 2000)], 30);
  // Another repository.
  await writeSegment(join(dir, 'other', 'dsC'), segMeta('c1', { repo: 'other', ds: 'dsC', partition: 0 }), [makeEvents(2, 5)], true);
  // Noise the walk must ignore or survive.
  await writeFile(join(dir, 'sandbox', 'dsA', 'a1.seg.damaged-123'), 'junk');
  await writeFile(join(dir, 'sandbox', 'dsA', 'notes.txt'), 'junk');
  await mkdir(join(dir, 'sandbox', 'dsA', 'deeper'), { recursive: true });
  await copyFile(a2.path, join(dir, 'sandbox', 'dsA', 'deeper', 'too-deep.seg'));
  await writeFile(join(dir, 'sandbox', 'dsA', 'garbage.seg'), Buffer.from('this is not a segment at all'));

  t.strictSame(
    (await listSegmentFiles(dir)).map((p) => p.slice(dir.length + 1)),
    ['other/dsC/c1.seg', 'sandbox/dsA/a1.seg', 'sandbox/dsA/a2.seg', 'sandbox/dsA/a3.seg', 'sandbox/dsA/a4.seg', 'sandbox/dsA/garbage.seg', 'sandbox/dsB/b1.seg'],
    'segment files two levels down, sorted; deeper and non-.seg names ignored',
  );

  const a1Before = await readFile(a1.path);
  const { logger, errors } = recordingLogger();
  const cat = await SegmentCatalog.load(dir, logger, 1_800_000_000_000);

  t.strictSame(cat.all().map((s) => s.meta.id).sort(), ['a1', 'a2', 'a3', 'a4', 'b1', 'c1']);
  t.ok(cat.all().every((s) => s.closed), 'every segment is closed after load');
  for (const s of cat.all()) {
    const buf = await readFile(s.path);
    const seg = parseSegment(buf, s.path);
    t.not(seg.footer, null, `${s.meta.id} has a footer on disk`);
    t.strictSame(seg.damage, [], `${s.meta.id} has no damage left`);
    t.strictSame(s.blocks, seg.blocks, `${s.meta.id} blocks`);
    t.equal(s.bytes, (await stat(s.path)).size, `${s.meta.id} bytes`);
  }
  t.ok((await readFile(a1.path)).equals(a1Before), 'a closed segment is not rewritten');
  t.equal(cat.get('a3')!.blocks.length, 2);
  t.equal(cat.get('a3')!.meta.ds, 'dsA');
  t.equal(cat.get('b1')!.blocks.length, 1, 'the torn block of b1 was cut');
  t.ok((await readdir(join(dir, 'sandbox', 'dsB'))).some((n) => n.startsWith('b1.seg.damaged-1800000000000')), 'b1 torn bytes kept aside');
  t.equal(parseSegment(await readFile(cat.get('a3')!.path), 'a3').footer!.closedAt, 1_800_000_000_000);

  // makeEvents(n, first): offsets first + floor(i/3)*100, index i%3.
  t.strictSame(cat.highWater(3, 'dsA'), { offset: 1500 + 100, index: 1 }, 'last event of a3 (open, now closed)');
  t.strictSame(cat.highWater(4, 'dsA'), { offset: 99_000 + 200, index: 0 });
  t.strictSame(cat.highWater(3, 'dsB'), { offset: 200, index: 1 }, 'only the intact block of b1 counts');
  t.strictSame(cat.highWater(0, 'dsC'), { offset: 5, index: 1 });
  t.equal(cat.highWater(3, 'dsC'), null);
  t.equal(cat.highWater(5, 'dsA'), null);

  t.strictSame(cat.forRepository('other').map((s) => s.meta.id), ['c1']);
  t.strictSame(cat.forRepository('sandbox').map((s) => s.meta.id).sort(), ['a1', 'a2', 'a3', 'a4', 'b1']);
  t.equal(cat.get('garbage'), undefined);
  t.equal(errors.filter((e) => e.msg === 'segment skipped: unreadable').length, 1, 'the garbage file is skipped and reported');
  t.match(errors.find((e) => e.msg === 'segment skipped: unreadable')!.fields, { file: join(dir, 'sandbox', 'dsA', 'garbage.seg') });
  t.ok(errors.some((e) => e.msg === 'segment damage found' && e.fields?.['file'] === join(dir, 'sandbox', 'dsB', 'b1.seg')), 'b1 damage reported');
  t.equal(a4.meta.partition, 4);

  // A second load finds everything closed and changes nothing.
  const snapshot = await Promise.all(cat.all().map(async (s) => [s.path, await readFile(s.path)] as const));
  const again = await SegmentCatalog.load(dir, silentLogger, 1_900_000_000_000);
  t.strictSame(again.all().map((s) => s.meta.id).sort(), ['a1', 'a2', 'a3', 'a4', 'b1', 'c1']);
  t.strictSame(again.highWater(3, 'dsA'), { offset: 1600, index: 1 });
  for (const [p, b] of snapshot) t.ok((await readFile(p)).equals(b), `${p} unchanged by a second load`);
});

t.test('load of a missing directory is an empty catalog', async (t) => {
  const root = await tempDir(t);
  const cat = await SegmentCatalog.load(join(root, 'nope'), silentLogger, 0);
  t.strictSame(cat.all(), []);
  t.equal(cat.dir, join(root, 'nope'));
});

t.test('put replaces a segment by id and raises high-water marks', async (t) => {
  const cat = new SegmentCatalog('/x');
  const m = segMeta('s1');
  const block = (lastOffset: number, lastIndex: number) => ({ compressedLength: 1, uncompressedLength: 1, eventCount: 1, minTs: 0, maxTs: 0, firstOffset: 0, firstIndex: 0, lastOffset, lastIndex, bloomLength: 0, gramLength: 0, headerLength: 68, crc: 0, pos: 0 });
  cat.put({ path: '/x/s1.seg', meta: m, blocks: [block(10, 0)], closed: false, bytes: 10 });
  t.strictSame(cat.highWater(3, 'dsA'), { offset: 10, index: 0 });
  cat.put({ path: '/x/s1.seg', meta: m, blocks: [block(10, 0), block(30, 4)], closed: true, bytes: 20 });
  t.equal(cat.all().length, 1);
  t.equal(cat.get('s1')!.closed, true);
  t.strictSame(cat.highWater(3, 'dsA'), { offset: 30, index: 4 });
});

t.test('voidAfter: blocks of a lost epoch past its marks leave queries and marks, also after a restart', async (t) => {
  const dir = await tempDir(t);
  // Partition 3, dsA: three blocks of 3 records each (offsets 0..200, 300..500, 600..800).
  await writeSegment(join(dir, 'sandbox', 'dsA'), segMeta('s1'), [makeEvents(9, 0), makeEvents(9, 300, 9), makeEvents(9, 600, 18)], true);
  // Partition 3, dsB: one block; partition 4: untouched.
  await writeSegment(join(dir, 'sandbox', 'dsB'), segMeta('s2', { ds: 'dsB' }), [makeEvents(3, 0)], true);
  await writeSegment(join(dir, 'sandbox', 'dsA'), segMeta('s3', { partition: 4 }), [makeEvents(3, 0)], true);
  const cat = await SegmentCatalog.load(dir, silentLogger, 0);
  t.strictSame(cat.highWater(3, 'dsA'), { offset: 800, index: 2 });
  t.equal(cat.fencedEpoch(3), 0);

  // The epoch ended with dsA durable up to (500, 2); dsB had no mark: all of it is void.
  const n = await cat.voidAfter(3, new Map([['dsA', { offset: 500, index: 2 }]]), 7);
  t.equal(n, 2, 'the last dsA block and the dsB block are void');
  t.equal(cat.get('s1')?.blocks.length, 2);
  t.equal(cat.get('s2')?.blocks.length, 0);
  t.equal(cat.get('s3')?.blocks.length, 1, 'other partitions untouched');
  t.strictSame(cat.highWater(3, 'dsA'), { offset: 500, index: 2 }, 'the mark is what the kept blocks hold');
  t.equal(cat.highWater(3, 'dsB'), null);
  t.equal(cat.fencedEpoch(3), 7);
  t.strictSame(cat.marksOf(3), [['dsA', { offset: 500, index: 2 }]]);

  const again = await SegmentCatalog.load(dir, silentLogger, 0);
  t.equal(again.get('s1')?.blocks.length, 2, 'void after a restart too');
  t.equal(again.get('s2')?.blocks.length, 0);
  t.strictSame(again.highWater(3, 'dsA'), { offset: 500, index: 2 });
  t.equal(again.fencedEpoch(3), 7);
});

t.test('voidEpochs: blocks carrying an ended epoch past its end marks are void (own and copied alike), legacy ones are left to voidAfter', async (t) => {
  const dir = await tempDir(t);
  // Partition 3, dsA: epoch 2 wrote s1 (three blocks), epoch 3 wrote s2; s0 carries no epoch.
  await writeSegment(join(dir, 'sandbox', 'dsA'), segMeta('s1', { epoch: 2, writer: 1 }), [makeEvents(9, 0), makeEvents(9, 300, 9), makeEvents(9, 600, 18)], true);
  await writeSegment(join(dir, 'sandbox', 'dsA'), segMeta('s2', { epoch: 3, writer: 2 }), [makeEvents(9, 900, 27)], true);
  await writeSegment(join(dir, 'sandbox', 'dsA'), segMeta('s0'), [makeEvents(3, 1200)], true);
  const cat = await SegmentCatalog.load(dir, silentLogger, 0);
  const ends = new Map([[2, new Map([['dsA', { offset: 500, index: 2 }]])]]);
  t.equal(await cat.voidEpochs(3, ends), 1, 'the last block of epoch 2 is void');
  t.equal(cat.get('s1')?.blocks.length, 2);
  t.equal(cat.get('s2')?.blocks.length, 1, 'a running epoch is untouched');
  t.equal(cat.get('s0')?.blocks.length, 1, 'a segment without an epoch is untouched');
  t.equal(await cat.voidEpochs(3, ends), 0, 'nothing new: nothing done');
  // voidAfter (this node's own last epoch, legacy segments only) leaves epoch-carrying segments alone.
  await cat.voidAfter(3, new Map(), 9);
  t.equal(cat.get('s0')?.blocks.length, 0, 'the legacy segment is voided by voidAfter');
  t.equal(cat.get('s2')?.blocks.length, 1, 'an epoch-carrying one is not');
  const again = await SegmentCatalog.load(dir, silentLogger, 0);
  t.equal(again.get('s1')?.blocks.length, 2, 'void after a restart too');
  t.strictSame(again.highWater(3, 'dsA'), cat.highWater(3, 'dsA'), 'the same marks after a restart');
});

t.test('putReplica: a copy of an ended epoch counts only up to its end marks, also after a restart', async (t) => {
  const dir = await tempDir(t);
  const src = await tempDir(t);
  await writeSegment(join(src, 'sandbox', 'dsA'), segMeta('r1', { epoch: 4, writer: 2 }), [makeEvents(9, 0), makeEvents(9, 300, 9)], true);
  const loaded = await SegmentCatalog.load(src, silentLogger, 0);
  const info = loaded.get('r1')!;
  const cat = await SegmentCatalog.load(dir, silentLogger, 0);
  await cat.putReplica(info, new Map([['dsA', { offset: 200, index: 8 }]]));
  t.equal(cat.get('r1')?.blocks.length, 1, 'the block past the end marks is void');
  t.strictSame(cat.highWater(3, 'dsA'), { offset: 200, index: 2 }, 'and is not durable here');
  await cat.putReplica({ ...info, meta: { ...info.meta, id: 'r2' } }, undefined);
  t.equal(cat.get('r2')?.blocks.length, 2, 'a copy of a running epoch counts whole');
});
