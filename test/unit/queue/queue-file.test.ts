import t from 'tap';
import { encodeQueueFrame, QUEUE_FORMAT_VERSION, scanQueueFile } from '../../../src/queue/index.js';
import { frameBytes, QUEUE_HEADER_BYTES, QUEUE_MAGIC, queueFileHeader, queueFrameHead } from '../../../src/queue/queue-file.js';
import { crc32c, writeAll } from '../../../src/storage/index.js';
import { open, readFile } from 'node:fs/promises';
import { tempDir } from './helpers.js';

/** A queue file (header + frames) whose first record has offset `base`; returns bytes and record starts. */
function craft(base: number, payloads: Buffer[]): { buf: Buffer; starts: number[]; offsets: number[] } {
  const parts = [queueFileHeader()];
  const starts: number[] = [];
  const offsets: number[] = [];
  let pos = QUEUE_HEADER_BYTES;
  for (const p of payloads) {
    const offset = base + pos - QUEUE_HEADER_BYTES;
    starts.push(pos);
    offsets.push(offset);
    const f = encodeQueueFrame(offset, p);
    parts.push(f);
    pos += f.length;
  }
  return { buf: Buffer.concat(parts), starts, offsets };
}

const payloadsOf = (n: number): Buffer[] => Array.from({ length: n }, (_, i) => Buffer.from(`payload number ${i} `.repeat((i % 4) + 1)));

t.test('header and frame layout', async (t) => {
  t.equal(QUEUE_FORMAT_VERSION, 1);
  t.equal(QUEUE_HEADER_BYTES, 8);
  t.ok(QUEUE_MAGIC.equals(Buffer.from('LSDQ')));
  t.strictSame([...queueFileHeader()], [0x4c, 0x53, 0x44, 0x51, 1, 0, 0, 0]);

  const payload = Buffer.from('hello');
  const f = encodeQueueFrame(0x0102030405, payload);
  t.equal(f.length, 16 + 5);
  t.equal(frameBytes(5), 21);
  t.equal(frameBytes(0), 16);
  t.equal(f.readUInt32LE(0), 5 + 8, 'length covers the offset and the payload');
  t.equal(f.readBigUInt64LE(8), 0x0102030405n, 'body starts with the offset');
  t.ok(f.subarray(16).equals(payload));
  t.equal(f.readUInt32LE(4), crc32c(f.subarray(8)), 'CRC-32C over offset + payload');

  const empty = encodeQueueFrame(7, Buffer.alloc(0));
  t.equal(empty.length, 16);
  t.equal(empty.readUInt32LE(0), 8);
});

t.test('scanQueueFile reads every record of an intact file', async (t) => {
  const payloads = payloadsOf(20);
  for (const base of [0, 4104, 2 ** 40]) {
    const { buf, offsets } = craft(base, payloads);
    const scan = scanQueueFile(buf, base);
    t.equal(scan.records.length, 20, `base ${base}`);
    t.strictSame(scan.records.map((r) => r.offset), offsets);
    t.ok(scan.records.every((r, i) => r.payload.equals(payloads[i]!)), 'payloads identical');
    t.strictSame(scan.damaged, []);
    t.equal(scan.validEnd, buf.length);
  }
  // Offsets are stream positions: record n+1 = record n + 16 + payload length.
  const { offsets } = craft(0, payloads);
  for (let i = 1; i < offsets.length; i++) t.equal(offsets[i], offsets[i - 1]! + 16 + payloads[i - 1]!.length);
});

t.test('scanQueueFile on an empty file, a header-only file and from a later position', async (t) => {
  t.strictSame(scanQueueFile(queueFileHeader(), 0), { records: [], damaged: [], validEnd: 8 });
  const { buf, starts, offsets } = craft(100, payloadsOf(5));
  const scan = scanQueueFile(buf, 100, starts[3]);
  t.strictSame(scan.records.map((r) => r.offset), offsets.slice(3));
  t.strictSame(scan.damaged, []);
  t.equal(scan.validEnd, buf.length);
  t.strictSame(scanQueueFile(buf, 100, 0).records.map((r) => r.offset), offsets, 'from below the header starts at the header end');
  const atEnd = scanQueueFile(buf, 100, buf.length);
  t.strictSame(atEnd, { records: [], damaged: [], validEnd: buf.length });
});

t.test('scanQueueFile: a torn last record is damage up to the end', async (t) => {
  const payloads = payloadsOf(6);
  const { buf, starts, offsets } = craft(0, payloads);
  const last = starts[5]!;
  for (let cut = last + 1; cut < buf.length; cut++) {
    const scan = scanQueueFile(buf.subarray(0, cut), 0);
    if (scan.records.length !== 5 || scan.damaged.length !== 1 || scan.damaged[0]!.from !== last || scan.damaged[0]!.to !== cut || scan.validEnd !== last) {
      t.fail(`cut at ${cut}: ${JSON.stringify({ n: scan.records.length, d: scan.damaged, v: scan.validEnd })}`);
      return;
    }
  }
  t.pass(`every cut inside the last record (${buf.length - last - 1} positions) gives 5 records and one damaged tail`);
  const scan = scanQueueFile(buf.subarray(0, last), 0);
  t.strictSame(scan.records.map((r) => r.offset), offsets.slice(0, 5));
  t.strictSame(scan.damaged, [], 'a cut exactly at a record boundary is no damage');
});

t.test('scanQueueFile resynchronises past a damaged middle record', async (t) => {
  const payloads = payloadsOf(7);
  const { buf, starts, offsets } = craft(0, payloads);
  const victim = 3;
  const from = starts[victim]!;
  const to = starts[victim + 1]!;
  let checked = 0;
  for (let pos = from; pos < to; pos++) {
    for (const bit of [0, 3, 7]) {
      const b = Buffer.from(buf);
      b[pos]! ^= 1 << bit;
      const scan = scanQueueFile(b, 0);
      const got = scan.records.map((r) => r.offset);
      const want = offsets.filter((_, i) => i !== victim);
      if (JSON.stringify(got) !== JSON.stringify(want) || scan.damaged.length !== 1 || scan.damaged[0]!.from !== from || scan.damaged[0]!.to !== to || scan.validEnd !== buf.length) {
        t.fail(`flip at ${pos} bit ${bit}: ${JSON.stringify({ got, d: scan.damaged, v: scan.validEnd })}`);
        return;
      }
      if (!scan.records.every((r) => r.payload.equals(payloads[offsets.indexOf(r.offset)]!))) {
        t.fail(`flip at ${pos}: payload differs`);
        return;
      }
      checked++;
    }
  }
  t.equal(checked, (to - from) * 3, 'every flipped position of the victim record checked');
});

t.test('scanQueueFile does not accept a frame that names another offset', async (t) => {
  // A frame copied from elsewhere (stale bytes) has a valid CRC but the wrong self-offset.
  const good = craft(0, payloadsOf(2));
  const stale = encodeQueueFrame(999_999, Buffer.from('stale'));
  const buf = Buffer.concat([good.buf, stale]);
  const scan = scanQueueFile(buf, 0);
  t.equal(scan.records.length, 2);
  t.strictSame(scan.damaged, [{ from: good.buf.length, to: buf.length }]);
  t.equal(scan.validEnd, good.buf.length);

  // The same file scanned with the wrong base finds nothing intact.
  const wrongBase = scanQueueFile(good.buf, 16);
  t.equal(wrongBase.records.length, 0);
  t.strictSame(wrongBase.damaged, [{ from: 8, to: good.buf.length }]);
  t.equal(wrongBase.validEnd, 8);
});

t.test('scanQueueFile: garbage between records, a zero-filled tail and an absurd length', async (t) => {
  const a = craft(0, payloadsOf(2));
  const garbage = Buffer.from('#'.repeat(37));
  // The record after the garbage sits at a later stream position: it must name that offset.
  const afterPos = a.buf.length + garbage.length;
  const next = encodeQueueFrame(afterPos - QUEUE_HEADER_BYTES, Buffer.from('after garbage'));
  const buf = Buffer.concat([a.buf, garbage, next, Buffer.alloc(50)]);
  const scan = scanQueueFile(buf, 0);
  t.strictSame(scan.records.map((r) => r.offset), [...a.offsets, afterPos - QUEUE_HEADER_BYTES]);
  t.equal(scan.records[2]!.payload.toString(), 'after garbage');
  t.strictSame(scan.damaged, [
    { from: a.buf.length, to: afterPos },
    { from: afterPos + next.length, to: buf.length },
  ]);
  t.equal(scan.validEnd, afterPos + next.length);

  const huge = Buffer.from(a.buf);
  huge.writeUInt32LE(0xffffffff, a.starts[1]!);
  const s2 = scanQueueFile(huge, 0);
  t.equal(s2.records.length, 1);
  t.strictSame(s2.damaged, [{ from: a.starts[1]!, to: huge.length }]);
});

// --- frame heads written apart from their payloads (writev, no copy) ----------------------------

/** Head + payload of each record as separate buffers (the embedded queue's writev), from `base`. */
function heads(base: number, payloads: Uint8Array[]): { pieces: Buffer[]; offsets: number[] } {
  const pieces: Buffer[] = [queueFileHeader()];
  const offsets: number[] = [];
  let offset = base;
  for (const p of payloads) {
    offsets.push(offset);
    pieces.push(queueFrameHead(offset, p), Buffer.from(p.buffer, p.byteOffset, p.byteLength));
    offset += frameBytes(p.byteLength);
  }
  return { pieces, offsets };
}

t.test('queueFrameHead + payload, written separately, is the frame encodeQueueFrame makes', async (t) => {
  const payloads = [...payloadsOf(9), Buffer.alloc(0), Buffer.alloc(70_000, 0xab)];
  for (const base of [0, 4104, 2 ** 40]) {
    let offset = base;
    for (const p of payloads) {
      const head = queueFrameHead(offset, p);
      t.equal(head.length, 16);
      if (!Buffer.concat([head, p]).equals(encodeQueueFrame(offset, p))) t.fail(`frame at ${offset} (${p.length} bytes) differs`);
      offset += frameBytes(p.length);
    }
  }
  t.pass('every frame identical');

  // Payloads that are views into a larger buffer (the CRC covers the view, not the buffer).
  const big = Buffer.from('#'.repeat(50) + 'alpha' + '#'.repeat(50) + 'beta' + '#'.repeat(50));
  const views = [new Uint8Array(big.buffer, big.byteOffset + 50, 5), big.subarray(105, 109)];
  t.ok(queueFrameHead(7, views[0]!).equals(encodeQueueFrame(7, Buffer.from('alpha')).subarray(0, 16)), 'a Uint8Array view: the head of its bytes alone');

  // Written with writev to a real file and scanned back: the same records as one-buffer frames.
  const dir = await tempDir(t);
  const all = [...payloads, ...views];
  const { pieces, offsets } = heads(4104, all);
  const fh = await open(`${dir}/f.dq`, 'w');
  await writeAll(fh, pieces);
  await fh.close();
  const file = await readFile(`${dir}/f.dq`);
  t.ok(file.equals(craft(4104, all.map((p) => Buffer.from(p))).buf), 'the file is byte for byte the one-buffer file');
  const scan = scanQueueFile(file, 4104);
  t.strictSame(scan.records.map((r) => r.offset), offsets);
  t.ok(scan.records.every((r, i) => r.payload.equals(all[i]!)), 'payloads identical');
  t.strictSame(scan.damaged, []);
  t.equal(scan.validEnd, file.length);
});

t.test('a payload byte changed after its head was made is caught by the CRC in the head', async (t) => {
  const payloads = payloadsOf(5);
  const { pieces, offsets } = heads(0, payloads);
  const intact = Buffer.concat(pieces);
  t.equal(scanQueueFile(intact, 0).records.length, 5, 'setup: intact');
  const victim = 2;
  let caught = 0;
  for (let i = 0; i < payloads[victim]!.length; i++) {
    const changed = pieces.map((b) => Buffer.from(b));
    changed[1 + 2 * victim + 1]![i]! ^= 0x10; // the victim's payload piece, its head untouched
    const scan = scanQueueFile(Buffer.concat(changed), 0);
    const got = scan.records.map((r) => r.offset);
    if (JSON.stringify(got) === JSON.stringify(offsets.filter((_, k) => k !== victim)) && scan.damaged.length === 1) caught++;
  }
  t.equal(caught, payloads[victim]!.length, 'every flipped payload byte: that record (only) is damage');

  // The head's CRC also covers the offset: a head made for another position does not pass.
  const wrong = [...pieces];
  wrong[1 + 2 * victim] = queueFrameHead(offsets[victim]! + 1, payloads[victim]!);
  t.equal(scanQueueFile(Buffer.concat(wrong), 0).records.length, 4, 'a head for offset + 1 is refused');
  // ... and when the offset field is then set right, the CRC (made with the other offset) fails.
  const forgedHead = queueFrameHead(offsets[victim]! + 1, payloads[victim]!);
  forgedHead.writeBigUInt64LE(BigInt(offsets[victim]!), 8);
  const forged = [...pieces];
  forged[1 + 2 * victim] = forgedHead;
  t.equal(scanQueueFile(Buffer.concat(forged), 0).records.length, 4, 'the CRC covers the offset');
  t.equal(crc32c(Buffer.concat([pieces[1 + 2 * victim]!.subarray(8), payloads[victim]!])), pieces[1 + 2 * victim]!.readUInt32LE(4), 'CRC-32C over offset + payload');
});
