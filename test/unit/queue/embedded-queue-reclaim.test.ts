/**
 * Reclaiming digested queue bytes: the file being appended to is rolled over once every record in
 * it is below the checkpoint (and it holds at least 64 KiB), so a partition whose data is all in
 * segments keeps no digested bytes; nothing at or above the checkpoint is ever dropped, appends
 * that race the roll keep their order and offsets, and a crash between the roll's steps leaves a
 * queue that opens with the same records and end offset.
 */
import t from 'tap';
import { open, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { QUEUE_HEADER_BYTES, queueFileHeader } from '../../../src/queue/queue-file.js';
import { fileName, openQueue, partDir, payload, queueFiles, readAll, tempDir } from './helpers.js';

const LEN = 1000; // frame = 1016 bytes
const FRAME = LEN + 16;
const ENOUGH = 70; // 71,120 bytes: past the 64 KiB roll threshold

t.test('a wholly digested current file is rolled over and removed; appends continue at the same offset', async (t) => {
  const dir = await tempDir(t);
  const { q, fatal } = await openQueue(dir, 1, 1024 * 1024);
  const offsets: number[] = [];
  for (let i = 0; i < ENOUGH; i++) offsets.push(await q.append(0, payload(i, LEN)));
  const end = q.endOffset(0);
  t.equal(end, ENOUGH * FRAME);

  await q.truncateBelow(0, end - 1);
  t.strictSame(await queueFiles(dir), [fileName(0)], 'one byte short of the end: the file stays');
  t.strictSame((await readAll(q, 0, offsets[ENOUGH - 1]!)).map((r) => r.offset), [offsets[ENOUGH - 1]], 'the last record is still there');

  await q.truncateBelow(0, end);
  t.strictSame(await queueFiles(dir), [fileName(end)], 'at the end: a new file at the end offset, the old one gone');
  t.equal((await stat(join(partDir(dir, 0), fileName(end)))).size, QUEUE_HEADER_BYTES, 'the new file holds only its header');
  t.equal(q.sizeBytes(), 0);
  t.equal(q.endOffset(0), end, 'the end offset is unchanged');
  t.strictSame(await readAll(q, 0), [], 'nothing left to read');

  const next = await q.append(0, payload(ENOUGH, LEN));
  t.equal(next, end, 'the next append takes the next offset');
  t.ok((await readAll(q, 0))[0]!.payload.equals(payload(ENOUGH, LEN)));
  await q.close();

  const { q: q2 } = await openQueue(dir, 1, 1024 * 1024);
  t.equal(q2.endOffset(0), end + FRAME, 'reopened: offsets continue');
  t.strictSame((await readAll(q2, 0)).map((r) => r.offset), [end]);
  await q2.close();
  t.strictSame(fatal, []);
});

t.test('small or partly digested files are kept', async (t) => {
  const dir = await tempDir(t);
  const { q } = await openQueue(dir, 1, 1024 * 1024);
  for (let i = 0; i < 10; i++) await q.append(0, payload(i, LEN));
  await q.truncateBelow(0, q.endOffset(0));
  t.strictSame(await queueFiles(dir), [fileName(0)], 'under 64 KiB: not worth a new file');
  for (let i = 10; i < ENOUGH; i++) await q.append(0, payload(i, LEN));
  const mid = 40 * FRAME;
  await q.truncateBelow(0, mid);
  t.strictSame(await queueFiles(dir), [fileName(0)], 'checkpoint inside the file: it stays');
  t.strictSame((await readAll(q, 0, mid)).map((r) => r.offset), Array.from({ length: ENOUGH - 40 }, (_, i) => (40 + i) * FRAME), 'every record at or above the checkpoint is readable');
  await q.close();
});

t.test('appends racing a roll keep their order and offsets', async (t) => {
  const dir = await tempDir(t);
  const { q, fatal } = await openQueue(dir, 1, 1024 * 1024);
  for (let i = 0; i < ENOUGH; i++) await q.append(0, payload(i, LEN));
  const end = q.endOffset(0);
  const rolling = q.truncateBelow(0, end);
  // Appended while the roll is in progress: they wait for the new file.
  const racing = Array.from({ length: 20 }, (_, i) => q.append(0, payload(1000 + i, 100 + i)));
  await rolling;
  const got = await Promise.all(racing);
  let want = end;
  for (const [i, off] of got.entries()) {
    t.equal(off, want, `racing append ${i} at its offset`);
    want += 116 + i;
  }
  const rows = await readAll(q, 0, end);
  t.equal(rows.length, 20, 'every racing append is readable');
  t.ok(rows.every((r, i) => r.payload.equals(payload(1000 + i, 100 + i))), 'with its payload');
  // The racing appends landed in the new file (the old one is gone or, if the roll was skipped, still whole).
  const files = await queueFiles(dir);
  t.ok(files.includes(fileName(end)) || files.length === 1, `files: ${files.join(', ')}`);
  await q.close();
  const { q: q2 } = await openQueue(dir, 1, 1024 * 1024);
  t.equal(q2.endOffset(0), want, 'reopened: the same end');
  t.strictSame((await readAll(q2, 0, end)).map((r) => r.offset), got);
  await q2.close();
  t.strictSame(fatal, []);
});

t.test('a crash between the roll\'s steps: the queue opens with the same records and end', async (t) => {
  // State 1: the new file was made, the old one not yet unlinked.
  const dir = await tempDir(t);
  const { q } = await openQueue(dir, 1, 1024 * 1024);
  for (let i = 0; i < ENOUGH; i++) await q.append(0, payload(i, LEN));
  const end = q.endOffset(0);
  await q.close();
  await writeFile(join(partDir(dir, 0), fileName(end)), queueFileHeader());
  const { q: q1, fatal } = await openQueue(dir, 1, 1024 * 1024);
  t.equal(q1.endOffset(0), end, 'both files: the end is the old file\'s end');
  t.equal((await readAll(q1, 0)).length, ENOUGH, 'a replay from 0 still sees every record of the old file');
  await q1.truncateBelow(0, end);
  t.strictSame(await queueFiles(dir), [fileName(end)], 'the next truncation drops the old file');
  const next = await q1.append(0, payload(1, 10));
  t.equal(next, end);
  await q1.close();
  t.strictSame(fatal, []);

  // State 2: the new file's header was torn (the crash hit while it was written).
  const dir2 = await tempDir(t);
  const { q: a } = await openQueue(dir2, 1, 1024 * 1024);
  for (let i = 0; i < ENOUGH; i++) await a.append(0, payload(i, LEN));
  const end2 = a.endOffset(0);
  await a.close();
  const fh = await open(join(partDir(dir2, 0), fileName(end2)), 'w');
  await fh.write(queueFileHeader().subarray(0, 3));
  await fh.close();
  const { q: b, fatal: fatal2 } = await openQueue(dir2, 1, 1024 * 1024);
  t.equal(b.endOffset(0), end2, 'a torn new file counts as empty');
  t.equal((await readFile(join(partDir(dir2, 0), fileName(end2)))).length, QUEUE_HEADER_BYTES, 'and gets its header back');
  t.equal((await readAll(b, 0)).length, ENOUGH);
  t.equal(await b.append(0, payload(2, 10)), end2);
  await b.close();
  t.strictSame(fatal2, []);
});

t.test('a file filled by a batch is rolled over right after that batch, the partition busy meanwhile', async (t) => {
  const dir = await tempDir(t);
  const { q, fatal } = await openQueue(dir, 1, 4 * FRAME);
  for (let i = 0; i < 3; i++) await q.append(0, payload(i, LEN));
  t.strictSame(await queueFiles(dir), [fileName(0)]);
  await q.append(0, payload(3, LEN)); // the file now holds fileBytes: full
  t.ok(q.busy(0), 'busy while the next file is made (after the acknowledgement)');
  while (q.busy(0)) await new Promise((r) => setTimeout(r, 1));
  t.strictSame(await queueFiles(dir), [fileName(0), fileName(4 * FRAME)], 'the next file exists before any further append');
  t.equal(await q.append(0, payload(4, LEN)), 4 * FRAME, 'the next append goes there, at the next offset');
  t.strictSame((await readAll(q, 0)).map((r) => r.offset), [0, 1, 2, 3, 4].map((i) => i * FRAME));
  await q.close();
  t.equal(fatal.length, 0);
});
