import t from 'tap';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { EmbeddedDigestQueue, scanQueueFile } from '../../../src/queue/index.js';
import { damagedFiles, fileName, openQueue, partDir, payload, queueFiles, readAll, tempDir } from './helpers.js';

t.test('a fresh queue: partitions, empty files, offsets start at 0', async (t) => {
  const dir = await tempDir(t);
  const { q } = await openQueue(join(dir, 'queue'), 3);
  t.equal(q.partitionCount, 3);
  for (let p = 0; p < 3; p++) {
    t.equal(q.endOffset(p), 0);
    t.strictSame(await queueFiles(join(dir, 'queue'), p), [fileName(0)]);
    t.strictSame(await readAll(q, p), []);
    const bytes = await readFile(join(partDir(join(dir, 'queue'), p), fileName(0)));
    t.strictSame([...bytes], [0x4c, 0x53, 0x44, 0x51, 1, 0, 0, 0], 'header only');
  }
  t.equal(q.sizeBytes(), 0);
  t.throws(() => q.endOffset(3), { code: 'E_INTERNAL', message: /no partition 3/ });
  await t.rejects(async () => q.append(3, Buffer.from('x')), { code: 'E_INTERNAL', message: /no partition 3/ });
  await t.rejects(readAll(q, 3), { code: 'E_INTERNAL' });
  await q.close();
});

t.test('sequential appends: offset of record n+1 = offset n + 16 + payload length', async (t) => {
  const dir = await tempDir(t);
  const { q, fatal } = await openQueue(dir, 2);
  const offsets: number[] = [];
  let expected = 0;
  for (let i = 0; i < 50; i++) {
    const p = payload(i);
    const off = await q.append(1, p);
    t.equal(off, expected, `record ${i} at ${expected}`);
    offsets.push(off);
    expected += 16 + p.length;
    t.equal(q.endOffset(1), expected);
  }
  t.equal(q.endOffset(0), 0, 'other partition untouched');
  t.equal(q.sizeBytes(), expected);
  const back = await readAll(q, 1);
  t.equal(back.length, 50);
  t.strictSame(back.map((r) => r.offset), offsets);
  t.ok(back.every((r, i) => r.partition === 1 && r.payload.equals(payload(i)) && r.nextOffset === r.offset + 16 + payload(i).length), 'payloads, partition and nextOffset');
  const file = await readFile(join(partDir(dir, 1), fileName(0)));
  t.equal(file.length, 8 + expected, 'file = header + frames');
  t.strictSame(fatal, []);
  await q.close();
});

t.test('an empty payload is a 16-byte record', async (t) => {
  const dir = await tempDir(t);
  const { q } = await openQueue(dir);
  t.equal(await q.append(0, Buffer.alloc(0)), 0);
  t.equal(await q.append(0, Buffer.from('x')), 16);
  t.equal(q.endOffset(0), 33);
  const back = await readAll(q, 0);
  t.strictSame(back.map((r) => [r.offset, r.nextOffset, r.payload.toString()]), [
    [0, 16, ''],
    [16, 33, 'x'],
  ]);
  await q.close();
});

t.test('500 concurrent appends resolve in call order and share fsync batches', async (t) => {
  const dir = await tempDir(t);
  const { q, fatal } = await openQueue(dir);
  // Listener calls of one batch run in one synchronous loop (after that batch's single fdatasync):
  // group them by microtask turn to count batches.
  const batches: number[] = [];
  let current = 0;
  q.onDurable(() => {
    if (current === 0) queueMicrotask(() => {
      batches.push(current);
      current = 0;
    });
    current++;
  });
  const payloads = Array.from({ length: 500 }, (_, i) => payload(i, 10 + (i % 97)));
  const promises = payloads.map((p) => q.append(0, p));
  const offsets = await Promise.all(promises);
  await new Promise((r) => setImmediate(r)); // notifications follow the acknowledgements
  let expected = 0;
  const want = payloads.map((p) => {
    const o = expected;
    expected += 16 + p.length;
    return o;
  });
  t.strictSame(offsets, want, 'offsets follow call order, contiguous');
  t.equal(q.endOffset(0), expected);
  const back = await readAll(q, 0);
  t.equal(back.length, 500);
  t.strictSame(back.map((r) => r.offset), want, 'read back in offset order');
  t.ok(back.every((r, i) => r.payload.equals(payloads[i]!)), 'identical payloads');
  t.equal(batches.reduce((a, b) => a + b, 0), 500, 'every record seen once');
  t.ok(batches.length <= 2, `500 appends made durable in ${batches.length} batches (group commit), not one fsync each`);
  t.strictSame(fatal, []);
  await q.close();
});

/** One turn of the event loop: durable-append notifications run on setImmediate after the acks. */
const notified = (): Promise<void> => new Promise((r) => setImmediate(r));

// onDurable (order, attachments, after the ack, a throwing listener), follow and the other
// interface-level cases are in shared-suite.ts, run on this queue by embedded-shared.test.ts.

t.test('read(p, from) with an offset inside a record (byte offsets)', async (t) => {
  const dir = await tempDir(t);
  const { q } = await openQueue(dir);
  const offsets: number[] = [];
  for (let i = 0; i < 30; i++) offsets.push(await q.append(0, payload(i)));
  // An offset inside a record: that record is not returned, the following ones are.
  const inside = await readAll(q, 0, offsets[5]! + 3);
  t.strictSame(inside.map((r) => r.offset), offsets.slice(6));
  await q.close();
});

t.test('reopen after close keeps every record and continues the offsets', async (t) => {
  const dir = await tempDir(t);
  let { q } = await openQueue(dir, 2);
  const want: [number, number, Buffer][] = [];
  for (let i = 0; i < 40; i++) {
    const p = payload(i);
    want.push([i % 2, await q.append(i % 2, p), p]);
  }
  const end0 = q.endOffset(0);
  const end1 = q.endOffset(1);
  const size = q.sizeBytes();
  await q.close();

  ({ q } = await openQueue(dir, 2));
  t.equal(q.endOffset(0), end0);
  t.equal(q.endOffset(1), end1);
  t.equal(q.sizeBytes(), size);
  for (const part of [0, 1]) {
    const back = await readAll(q, part);
    const mine = want.filter((w) => w[0] === part);
    t.strictSame(back.map((r) => r.offset), mine.map((w) => w[1]));
    t.ok(back.every((r, i) => r.payload.equals(mine[i]![2])));
  }
  const p = payload(1000);
  t.equal(await q.append(0, p), end0, 'next append continues at the old end');
  t.equal(q.endOffset(0), end0 + 16 + p.length);
  await q.close();

  ({ q } = await openQueue(dir, 2));
  const back = await readAll(q, 0);
  t.equal(back.length, 21);
  t.ok(back.at(-1)!.payload.equals(p));
  t.strictSame(await damagedFiles(dir, 0), [], 'a clean reopen sets nothing aside');
  await q.close();
});

t.test('roll-over at fileBytes and truncateBelow removing whole files only', async (t) => {
  const dir = await tempDir(t);
  const { q } = await openQueue(dir, 1, 4096);
  const len = 200; // frame = 216 bytes; a file is full after 19 frames (4104 bytes)
  const offsets: number[] = [];
  for (let i = 0; i < 100; i++) offsets.push(await q.append(0, payload(i, len)));
  t.equal(offsets[99], 99 * 216);
  const files = await queueFiles(dir);
  // 100 records, 19 per file: bases 0, 4104, 8208, 12312, 16416, 20520 (6 files)
  t.strictSame(files, [0, 4104, 8208, 12312, 16416, 20520].map(fileName));
  for (const [i, f] of files.entries()) {
    const st = await stat(join(partDir(dir, 0), f));
    t.equal(st.size, 8 + (i < 5 ? 19 : 5) * 216, `${f} size`);
    const scan = scanQueueFile(await readFile(join(partDir(dir, 0), f)), Number(f.slice(0, 20)));
    t.equal(scan.records[0]!.offset, i * 4104, 'first record offset = file base');
  }
  t.equal(q.sizeBytes(), 100 * 216);
  t.strictSame((await readAll(q, 0)).map((r) => r.offset), offsets, 'reads span all files');
  t.strictSame((await readAll(q, 0, offsets[40]!)).map((r) => r.offset), offsets.slice(40), 'read from a record in the third file');

  // An offset inside file 2 (8208..12312): files 0 and 1 go, file 2 stays.
  await q.truncateBelow(0, 10_000);
  t.strictSame(await queueFiles(dir), [8208, 12312, 16416, 20520].map(fileName));
  t.equal(q.sizeBytes(), (100 - 38) * 216);
  // Exactly at a file end: that file goes too.
  await q.truncateBelow(0, 12312);
  t.strictSame(await queueFiles(dir), [12312, 16416, 20520].map(fileName));
  // One byte short of a file end: it stays.
  await q.truncateBelow(0, 16415);
  t.strictSame(await queueFiles(dir), [12312, 16416, 20520].map(fileName));
  t.strictSame((await readAll(q, 0)).map((r) => r.offset), offsets.slice(57), 'read from 0 starts at the oldest kept file');
  t.strictSame((await readAll(q, 0, offsets[60]!)).map((r) => r.offset), offsets.slice(60));
  t.ok((await readAll(q, 0)).every((r, i) => r.payload.equals(payload(57 + i, len))));

  // Past the end: never the file being appended to.
  await q.truncateBelow(0, 1e12);
  t.strictSame(await queueFiles(dir), [fileName(20520)]);
  t.strictSame((await readAll(q, 0)).map((r) => r.offset), offsets.slice(95));
  t.equal(q.sizeBytes(), 5 * 216);
  const next = await q.append(0, payload(100, len));
  t.equal(next, 100 * 216, 'appends continue');
  t.strictSame((await readAll(q, 0)).map((r) => r.offset), [...offsets.slice(95), next]);
  await q.close();

  // Reopen after truncation: offsets still continue from the kept files.
  const { q: q2 } = await openQueue(dir, 1, 4096);
  t.equal(q2.endOffset(0), 101 * 216);
  t.strictSame((await readAll(q2, 0)).map((r) => r.offset), [...offsets.slice(95), next]);
  await q2.close();
});

t.test('a full file is rolled over right after the batch that filled it; the current file is never removed', async (t) => {
  const dir = await tempDir(t);
  const { q } = await openQueue(dir, 1, 4096);
  for (let i = 0; i < 18; i++) await q.append(0, payload(i, 200));
  t.strictSame(await queueFiles(dir), [fileName(0)], 'not full yet');
  await q.truncateBelow(0, 1e9);
  t.strictSame(await queueFiles(dir), [fileName(0)], 'the current file is never removed');
  await q.append(0, payload(18, 200)); // 19 frames of 216 bytes: 4104 >= 4096
  while (q.busy(0)) await new Promise((r) => setTimeout(r, 1));
  t.strictSame(await queueFiles(dir), [fileName(0), fileName(4104)], 'rolled over once full, before any further append');
  t.equal((await readAll(q, 0)).length, 19);
  await q.append(0, payload(19, 200));
  t.strictSame(await queueFiles(dir), [fileName(0), fileName(4104)]);
  await q.truncateBelow(0, 4104);
  t.strictSame(await queueFiles(dir), [fileName(4104)]);
  t.strictSame((await readAll(q, 0)).map((r) => r.offset), [4104]);
  await q.close();
});

t.test('ensurePartitions raises the count and never lowers it', async (t) => {
  const dir = await tempDir(t);
  const { q } = await openQueue(dir, 2);
  await q.append(1, Buffer.from('one'));
  await q.ensurePartitions(5);
  t.equal(q.partitionCount, 5);
  for (let p = 2; p < 5; p++) {
    t.equal(q.endOffset(p), 0);
    t.strictSame(await queueFiles(dir, p), [fileName(0)]);
  }
  t.equal(await q.append(4, Buffer.from('four')), 0);
  t.equal(await q.append(4, Buffer.from('four again')), 20);
  t.strictSame((await readAll(q, 4)).map((r) => r.payload.toString()), ['four', 'four again']);
  await q.ensurePartitions(1);
  t.equal(q.partitionCount, 5, 'not lowered');
  t.equal(q.endOffset(1), 19, 'existing partitions untouched');
  await q.close();

  const { q: q2 } = await openQueue(dir, 5);
  t.equal(q2.endOffset(4), 20 + 26);
  t.strictSame((await readAll(q2, 1)).map((r) => r.payload.toString()), ['one']);
  await q2.close();
});

t.test('destroy removes the queue directory', async (t) => {
  const dir = await tempDir(t);
  const qdir = join(dir, 'queue');
  const { q } = await openQueue(qdir);
  await q.append(0, Buffer.from('x'));
  await q.close();
  await EmbeddedDigestQueue.destroy(qdir);
  await t.rejects(stat(qdir), { code: 'ENOENT' });
});

t.test('an I/O failure while flushing fails the queue: appends reject and onFatal fires once', async (t) => {
  // A failed writev/fdatasync (EIO, ENOSPC) cannot be produced portably here (tests may run as root,
  // so permissions do not stop writes). What can be produced for real is a failure on the same flush
  // path: the roll-over to a new file fails because the partition directory has disappeared. The
  // file open for writing stays writable; the roll-over right after the batch that fills it fails
  // quietly (a warning), and the next write's roll-over fails for good.
  const dir = await tempDir(t);
  const { q, fatal } = await openQueue(dir, 2, 256);
  const seen: number[] = [];
  q.onDurable((r) => seen.push(r.offset));
  t.equal(await q.append(1, Buffer.from('other partition')), 0);
  await rm(partDir(dir, 0), { recursive: true, force: true });
  t.equal(await q.append(0, payload(0, 300)), 0); // the file now holds >= 256 bytes
  await notified();
  t.strictSame(seen, [0, 0], 'the two good records were announced');
  t.equal(fatal.length, 0, 'a failed roll-over after a batch is not fatal by itself');

  const a = q.append(0, Buffer.from('lost 1'));
  const b = q.append(0, Buffer.from('lost 2'));
  await t.rejects(a, { code: 'E_UNAVAILABLE', message: /digest queue partition 0: write or fsync failed .*the node must stop/ });
  await t.rejects(b, { code: 'E_UNAVAILABLE' });
  t.equal(fatal.length, 1, 'onFatal called once');
  t.match(fatal[0], { code: 'E_UNAVAILABLE', retriable: true });
  await notified();
  t.strictSame(seen, [0, 0], 'listeners never saw the failed records');
  // Failed is failed: every later append rejects at once, on any partition.
  await t.rejects(q.append(1, Buffer.from('later')), { code: 'E_UNAVAILABLE' });
  await t.rejects(q.append(0, Buffer.from('later')), { code: 'E_UNAVAILABLE' });
  t.equal(fatal.length, 1, 'still one fatal report');
  t.strictSame((await readAll(q, 1)).map((r) => r.payload.toString()), ['other partition'], 'nothing was written to partition 1');
  await q.close();
});
