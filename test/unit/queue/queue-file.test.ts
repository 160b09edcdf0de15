import t from 'tap';
import { encodeQueueFrame, QUEUE_FORMAT_VERSION, scanQueueFile } from '../../../src/queue/index.js';
import { frameBytes, QUEUE_HEADER_BYTES, QUEUE_MAGIC, queueFileHeader } from '../../../src/queue/queue-file.js';
import { crc32c } from '../../../src/storage/index.js';

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
