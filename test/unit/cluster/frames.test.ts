/**
 * Cluster frames: u32 length + msgpack body; a byte stream split or merged anywhere yields the same
 * messages; oversized lengths, undecodable bodies and non-messages are refused with E_PROTOCOL.
 */
import t from 'tap';
import { DEFAULT_MAX_FRAME_BYTES, encodeFrame, FrameParser, PROTOCOL_VERSION, type Message } from '../../../src/cluster/protocol/frames.js';
import { pack } from '../../../src/lib/msgpack.js';

const msgs: Message[] = [
  { t: 'hb', seq: 1, at: 1_700_000_000_000, members: [{ id: 1, uuid: 'u1', uri: 'http://a', addr: '127.0.0.1:1' }], payload: { partitions: [0, 2] } },
  { t: 'req', id: 7, type: 'query', body: { q: 'x'.repeat(1000) } },
  { t: 'res', id: 7, body: Buffer.from([1, 2, 3]) },
  { t: 'end', id: 8 },
];
const stream = Buffer.concat(msgs.map((m) => encodeFrame(m)));

t.test('layout: big-endian u32 body length, then the msgpack body', async (t) => {
  const f = encodeFrame({ t: 'end', id: 8 });
  const body = pack({ t: 'end', id: 8 });
  t.equal(f.readUInt32BE(0), body.length);
  t.same(f.subarray(4), body);
  t.equal(PROTOCOL_VERSION, 1);
});

t.test('one chunk holding every frame', async (t) => {
  t.same(new FrameParser().push(stream), msgs);
});

t.test('every split point, and byte by byte', async (t) => {
  for (let cut = 0; cut <= stream.length; cut += 7) {
    const p = new FrameParser();
    const got = [...p.push(stream.subarray(0, cut)), ...p.push(stream.subarray(cut))];
    if (JSON.stringify(got) !== JSON.stringify(msgs)) t.fail(`split at ${cut}`);
    t.equal(p.bufferedBytes, 0);
  }
  const p = new FrameParser();
  const got: Message[] = [];
  for (let i = 0; i < stream.length; i++) got.push(...p.push(stream.subarray(i, i + 1)));
  t.same(got, msgs);
});

t.test('random chunkings keep order and content', async (t) => {
  let seed = 42;
  const rnd = (n: number): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
  for (let round = 0; round < 50; round++) {
    const p = new FrameParser();
    const got: Message[] = [];
    for (let i = 0; i < stream.length; ) {
      const n = 1 + rnd(200);
      got.push(...p.push(stream.subarray(i, i + n)));
      i += n;
    }
    t.same(got, msgs, `round ${round}`);
  }
});

t.test('a frame is not delivered until complete', async (t) => {
  const f = encodeFrame(msgs[1]!);
  const p = new FrameParser();
  t.same(p.push(f.subarray(0, f.length - 1)), []);
  t.equal(p.bufferedBytes, f.length - 5, "the body part, the header having been read");
  t.same(p.push(f.subarray(f.length - 1)), [msgs[1]]);
});

t.test('an oversized length is refused from the header alone', async (t) => {
  const p = new FrameParser(1024);
  const header = Buffer.alloc(4);
  header.writeUInt32BE(1025, 0);
  t.throws(() => p.push(header), { code: 'E_PROTOCOL', message: /1025 bytes; a frame holds at most 1024/ });
  const huge = Buffer.from([0xff, 0xff, 0xff, 0xff]);
  t.throws(() => new FrameParser().push(huge), { code: 'E_PROTOCOL', message: new RegExp(`at most ${DEFAULT_MAX_FRAME_BYTES}`) });
  t.throws(() => encodeFrame({ t: 'res', body: 'x'.repeat(2000) }, 1024), { code: 'E_PROTOCOL', message: /"res" is \d+ bytes/ });
});

t.test('garbage bodies and non-messages are refused', async (t) => {
  const frame = (body: Buffer): Buffer => {
    const h = Buffer.alloc(4);
    h.writeUInt32BE(body.length, 0);
    return Buffer.concat([h, body]);
  };
  t.throws(() => new FrameParser().push(frame(Buffer.from([0xc1]))), { code: 'E_PROTOCOL' }, 'never-used byte');
  t.throws(() => new FrameParser().push(frame(Buffer.concat([pack({ t: 'hb' }), Buffer.from([1, 2])]))), { code: 'E_PROTOCOL', message: /not valid msgpack/ }, 'trailing bytes');
  t.throws(() => new FrameParser().push(frame(Buffer.from([0x92, 0x01]))), { code: 'E_PROTOCOL' }, 'truncated array');
  t.throws(() => new FrameParser().push(frame(Buffer.alloc(0))), { code: 'E_PROTOCOL' }, 'empty body');
  t.throws(() => new FrameParser().push(frame(pack([1, 2]))), { code: 'E_PROTOCOL', message: /not a message/ }, 'array');
  t.throws(() => new FrameParser().push(frame(pack({ type: 'x' }))), { code: 'E_PROTOCOL', message: /not a message/ }, 'no t');
  t.throws(() => new FrameParser().push(frame(pack('hello'))), { code: 'E_PROTOCOL' }, 'string');
  t.throws(() => new FrameParser().push(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')), { code: 'E_PROTOCOL' }, 'an HTTP request');
});
