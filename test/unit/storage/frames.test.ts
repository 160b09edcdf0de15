import t from 'tap';
import { crc32c } from '../../../src/storage/checksum.js';
import { encodeFrame, scanFrames, FRAME_HEADER_BYTES, MAX_FRAME_PAYLOAD } from '../../../src/storage/frames.js';

const payloads = [Buffer.from('first record'), Buffer.alloc(0), Buffer.from([0, 1, 2, 255]), Buffer.alloc(1000, 7)];

function concat(): { buf: Buffer; offsets: number[] } {
  const offsets: number[] = [];
  let pos = 0;
  const parts = payloads.map((p) => {
    offsets.push(pos);
    const f = encodeFrame(p);
    pos += f.length;
    return f;
  });
  return { buf: Buffer.concat(parts), offsets };
}

t.test('constants', async (t) => {
  t.equal(FRAME_HEADER_BYTES, 8);
  t.equal(MAX_FRAME_PAYLOAD, 256 * 1024 * 1024);
});

t.test('encodeFrame lays out length, CRC-32C, payload', async (t) => {
  const f = encodeFrame(Buffer.from('123456789'));
  t.equal(f.length, 17);
  t.equal(f.readUInt32LE(0), 9, 'length, little endian');
  t.equal(f.readUInt32LE(4), 0xe3069283, 'CRC-32C of the payload, little endian');
  t.same([...f.subarray(4, 8)], [0x83, 0x92, 0x06, 0xe3]);
  t.equal(f.subarray(8).toString(), '123456789');

  const empty = encodeFrame(new Uint8Array(0));
  t.same([...empty], [0, 0, 0, 0, 0, 0, 0, 0], 'an empty payload is a bare header of zeros');

  const backing = new Uint8Array(20).fill(9);
  backing.set([1, 2, 3], 5);
  const fv = encodeFrame(backing.subarray(5, 8));
  t.equal(fv.length, 11, 'a Uint8Array view contributes only its bytes');
  t.same([...fv.subarray(8)], [1, 2, 3]);
  t.equal(fv.readUInt32LE(4), crc32c(Buffer.from([1, 2, 3])));
});

t.test('round trip of several frames', async (t) => {
  const { buf, offsets } = concat();
  const scan = scanFrames(buf, 0);
  t.equal(scan.stop, undefined, 'no stop at a clean end');
  t.equal(scan.validEnd, buf.length);
  t.equal(scan.frames.length, payloads.length);
  scan.frames.forEach((f, i) => {
    t.equal(f.offset, offsets[i], `offset of frame ${i}`);
    t.ok(f.payload.equals(payloads[i]!), `payload of frame ${i}`);
  });
});

t.test('scanning from a non-zero start', async (t) => {
  const header = Buffer.from('HEADER!!');
  const { buf, offsets } = concat();
  const file = Buffer.concat([header, buf]);
  const scan = scanFrames(file, 8);
  t.equal(scan.frames.length, 4);
  t.same(
    scan.frames.map((f) => f.offset),
    offsets.map((o) => o + 8),
  );
  t.equal(scan.validEnd, file.length);
  t.equal(scan.stop, undefined);

  const fromSecond = scanFrames(buf, offsets[1]!);
  t.same(
    fromSecond.frames.map((f) => f.offset),
    offsets.slice(1),
  );
});

t.test('empty buffer', async (t) => {
  t.same(scanFrames(Buffer.alloc(0), 0), { frames: [], validEnd: 0 });
  const h = Buffer.alloc(8);
  t.same(scanFrames(h, 8), { frames: [], validEnd: 8 }, 'start at the end');
});

t.test('payloads are views into the scanned buffer', async (t) => {
  const buf = encodeFrame(Buffer.from('abc'));
  const scan = scanFrames(buf, 0);
  t.equal(scan.frames[0]!.payload.buffer, buf.buffer);
  t.equal(scan.frames[0]!.payload.byteOffset, buf.byteOffset + 8);
});

t.test('a truncated header stops at the frame start', async (t) => {
  const { buf, offsets } = concat();
  const last = offsets[3]!;
  for (let cut = last + 1; cut < last + FRAME_HEADER_BYTES; cut++) {
    const scan = scanFrames(buf.subarray(0, cut), 0);
    t.equal(scan.frames.length, 3, `cut at ${cut}: frames`);
    t.equal(scan.validEnd, last, `cut at ${cut}: validEnd`);
    t.same(scan.stop, { offset: last, reason: 'truncated-header' }, `cut at ${cut}: stop`);
  }
  const one = scanFrames(Buffer.from([5]), 0);
  t.same(one, { frames: [], validEnd: 0, stop: { offset: 0, reason: 'truncated-header' } });
});

t.test('a truncated payload stops at the frame start', async (t) => {
  const { buf, offsets } = concat();
  const last = offsets[3]!;
  for (const cut of [last + 8, last + 9, last + 500, buf.length - 1]) {
    const scan = scanFrames(buf.subarray(0, cut), 0);
    t.equal(scan.frames.length, 3, `cut at ${cut}: frames`);
    t.equal(scan.validEnd, last, `cut at ${cut}: validEnd`);
    t.same(scan.stop, { offset: last, reason: 'truncated-payload' }, `cut at ${cut}: stop`);
  }
  // A cut exactly on a frame boundary is no damage at all.
  const clean = scanFrames(buf.subarray(0, last), 0);
  t.equal(clean.frames.length, 3);
  t.equal(clean.validEnd, last);
  t.equal(clean.stop, undefined);
});

t.test('an empty payload frame with nothing after it is complete', async (t) => {
  const buf = Buffer.concat([encodeFrame(Buffer.from('x')), encodeFrame(Buffer.alloc(0))]);
  const scan = scanFrames(buf, 0);
  t.equal(scan.frames.length, 2);
  t.equal(scan.frames[1]!.payload.length, 0);
  t.equal(scan.validEnd, buf.length);
});

t.test('a flipped bit in a payload is a checksum mismatch and that payload is never returned', async (t) => {
  const { buf, offsets } = concat();
  // every bit of frame 0's payload, with later frames intact
  const start = offsets[0]! + 8;
  const end = offsets[1]!;
  let n = 0;
  let ok = 0;
  for (let byte = start; byte < end; byte++) {
    for (let bit = 0; bit < 8; bit++) {
      const b = Buffer.from(buf);
      b[byte]! ^= 1 << bit;
      const scan = scanFrames(b, 0);
      if (scan.frames.length !== 0 || scan.validEnd !== 0 || scan.stop?.reason !== 'checksum-mismatch' || scan.stop.offset !== 0) {
        t.fail(`flip at ${byte}.${bit}: ${JSON.stringify({ n: scan.frames.length, v: scan.validEnd, s: scan.stop })}`);
      } else ok++;
      n++;
    }
  }
  t.equal(n, (end - start) * 8, 'every bit tried');
  t.equal(ok, n, 'every flip detected at frame 0');
  // a flip in the last frame keeps the earlier ones
  const b = Buffer.from(buf);
  b[buf.length - 1]! ^= 0x10;
  const scan = scanFrames(b, 0);
  t.equal(scan.frames.length, 3);
  t.equal(scan.validEnd, offsets[3]);
  t.same(scan.stop, { offset: offsets[3], reason: 'checksum-mismatch' });
  t.ok(scan.frames.every((f, i) => f.payload.equals(payloads[i]!)));
});

t.test("a flipped bit in the header's CRC is a checksum mismatch", async (t) => {
  const { buf, offsets } = concat();
  for (const [i, off] of offsets.entries()) {
    for (let bit = 0; bit < 32; bit++) {
      const b = Buffer.from(buf);
      b[off + 4 + (bit >> 3)]! ^= 1 << (bit & 7);
      const scan = scanFrames(b, 0);
      t.equal(scan.frames.length, i, `frame ${i} crc bit ${bit}: frames`);
      t.equal(scan.validEnd, off, `frame ${i} crc bit ${bit}: validEnd`);
      t.same(scan.stop, { offset: off, reason: 'checksum-mismatch' }, `frame ${i} crc bit ${bit}: stop`);
    }
  }
});

t.test('a flipped bit in the length field never yields a frame', async (t) => {
  const { buf, offsets } = concat();
  const last = offsets[3]!;
  for (let bit = 0; bit < 32; bit++) {
    const b = Buffer.from(buf);
    b[last + (bit >> 3)]! ^= 1 << (bit & 7);
    const scan = scanFrames(b, 0);
    t.equal(scan.frames.length, 3, `length bit ${bit}`);
    t.equal(scan.validEnd, last);
    const len = b.readUInt32LE(last);
    const expected = len > MAX_FRAME_PAYLOAD ? 'implausible-length' : last + 8 + len > b.length ? 'truncated-payload' : 'checksum-mismatch';
    t.same(scan.stop, { offset: last, reason: expected }, `length bit ${bit} -> ${expected}`);
  }
});

t.test('an implausible length is reported as such, even with the bytes present', async (t) => {
  const h = Buffer.alloc(8);
  h.writeUInt32LE(MAX_FRAME_PAYLOAD + 1, 0);
  const good = encodeFrame(Buffer.from('ok'));
  const buf = Buffer.concat([good, h, Buffer.alloc(64)]);
  t.same(scanFrames(buf, 0).stop, { offset: good.length, reason: 'implausible-length' });
  t.equal(scanFrames(buf, 0).validEnd, good.length);
  t.equal(scanFrames(buf, 0).frames.length, 1);

  const ff = Buffer.alloc(16, 0xff);
  t.same(scanFrames(ff, 0), { frames: [], validEnd: 0, stop: { offset: 0, reason: 'implausible-length' } });

  // exactly the maximum is plausible; with too few bytes it is a truncated payload
  const max = Buffer.alloc(8);
  max.writeUInt32LE(MAX_FRAME_PAYLOAD, 0);
  t.same(scanFrames(max, 0).stop, { offset: 0, reason: 'truncated-payload' });
});

t.test('garbage after good frames (zeros from a pre-allocated tail)', async (t) => {
  const good = encodeFrame(Buffer.from('hello'));
  const buf = Buffer.concat([good, Buffer.alloc(8)]);
  // 8 zero bytes form a valid empty frame (len 0, crc 0): framing alone cannot tell.
  const scan = scanFrames(buf, 0);
  t.equal(scan.frames.length, 2);
  t.equal(scan.validEnd, buf.length);
  const buf2 = Buffer.concat([good, Buffer.alloc(8), Buffer.from([1])]);
  t.same(scanFrames(buf2, 0).stop, { offset: good.length + 8, reason: 'truncated-header' });
});
