import t from 'tap';
import {
  addEvent,
  assembleBlockV4,
  BLOCK_FIXED_BYTES_V5,
  BLOCK_FIXED_BYTES_V6,
  BLOCK_HEADER_BYTES,
  BLOCK_MAGIC_V5,
  BLOCK_MAGIC_V6,
  BLOCK_MAGIC,
  blockBloom,
  blockGrams,
  blockIntact,
  bodyOffset,
  blockLength,
  decodeBlockEvents,
  emptyColumns,
  encodeBlock,
  encodeBlockContent,
  readBlockMeta,
  type StoredEvent,
} from '../../../src/segments/block.js';
import { bloomMayContain } from '../../../src/segments/bloom.js';
import { gramFilterMayContain, gramProbes } from '../../../src/segments/grams.js';
import { fold } from '../../../src/query/casefold.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { crc32c } from '../../../src/storage/index.js';
import { columnsOf, makeEvents } from './helpers.js';

t.test('constants and the LZ4 codec', async (t) => {
  t.ok(BLOCK_MAGIC.equals(Buffer.from('LBK2')));
  t.equal(BLOCK_HEADER_BYTES, 68);
  t.ok(BLOCK_MAGIC_V5.equals(Buffer.from('LBK5')));
  t.equal(BLOCK_FIXED_BYTES_V5, 76);
  t.ok(BLOCK_MAGIC_V6.equals(Buffer.from('LBK6')));
  t.equal(BLOCK_FIXED_BYTES_V6, 84);
  t.equal(lz4Codec.name, 'lz4');
  const data = Buffer.from('abc'.repeat(1000));
  const c = lz4Codec.compress(data);
  t.ok(c.length < data.length, 'compresses repetitive data');
  t.ok(lz4Codec.decompress(c).equals(data), 'round trip');
});

t.test('addEvent builds columns; fields are sparse by position', async (t) => {
  const c = emptyColumns();
  t.strictSame(c, { count: 0, ts: [], tz: [], raw: [], it: [], off: [], idx: [], fields: new Map() });
  addEvent(c, { timestamp: 1, timezone: 'Z', rawstring: 'a', fields: { x: '1' }, ingestTimestamp: 10, offset: 0, index: 0 });
  addEvent(c, { timestamp: 2, timezone: 'Z', rawstring: 'b', fields: { y: '2' }, ingestTimestamp: 11, offset: 0, index: 1 });
  addEvent(c, { timestamp: 3, timezone: 'Z', rawstring: 'c', fields: { x: '3' }, ingestTimestamp: 12, offset: 50, index: 0 });
  t.equal(c.count, 3);
  t.strictSame(c.ts, [1, 2, 3]);
  t.strictSame(c.off, [0, 0, 50]);
  t.strictSame(c.idx, [0, 1, 0]);
  t.equal(c.fields.get('x')![0], '1');
  t.equal(c.fields.get('x')![1], undefined);
  t.equal(c.fields.get('x')![2], '3');
  t.equal(c.fields.get('y')![1], '2');
  t.equal(c.fields.get('y')![0], undefined);
});

t.test('encodeBlock/readBlockMeta/decodeBlockEvents round trip', async (t) => {
  const events: StoredEvent[] = [
    { timestamp: 1_700_000_005_000, timezone: 'Z', rawstring: 'héllo wörld 日本語 🎉', fields: { a: '1', only1: 'x' }, ingestTimestamp: 1_700_000_010_000, offset: 100, index: 2 },
    { timestamp: 1_700_000_001_000, timezone: '+05:30', rawstring: '', fields: {}, ingestTimestamp: 1_700_000_010_000, offset: 100, index: 3 },
    { timestamp: 1_700_000_009_999, timezone: 'America/New_York', rawstring: 'line1\nline2\ttab "quoted" \u0000nul', fields: { a: '', 'ключ': 'значение', 'a.b[0]': '🚀' }, ingestTimestamp: 1_700_000_010_001, offset: 216, index: 0 },
    { timestamp: -5, timezone: 'Z', rawstring: 'before the epoch', fields: { only4: 'y', a: '4' }, ingestTimestamp: 1_700_000_010_002, offset: 2 ** 40, index: 4_000_000_000 },
  ];
  const bytes = encodeBlock(columnsOf(events), lz4Codec);
  const m = readBlockMeta(bytes, 0);
  t.not(m, null);
  t.match(m, {
    eventCount: 4,
    minTs: -5,
    maxTs: 1_700_000_009_999,
    firstOffset: 100,
    firstIndex: 2,
    lastOffset: 2 ** 40,
    lastIndex: 4_000_000_000,
  });
  t.equal(blockLength(m!), bytes.length, 'header + directory + bloom + gram filter + column frames');
  t.equal(m!.framed, true, 'format 5: column frames');
  t.equal(m!.headerLength, 84 + bytes.readUInt32LE(64), 'fixed header + head section (column directory and summaries)');
  t.equal(bytes.length, m!.headerLength + m!.bloomLength + m!.gramLength + m!.compressedLength);
  t.equal(m!.bloomLength, 128, 'the minimum bloom (1024 bits) for a few tokens');
  t.equal(m!.gramLength, 128, 'the minimum gram filter (1024 bits) for a few grams');
  t.equal(m!.gramLength, bytes.readUInt32LE(60) & 0x7fffffff);
  t.equal(bytes.readUInt32LE(60) >>> 31, 1, 'bit 31: the gram filter holds field values too (format 4 on)');
  t.equal(m!.fieldGrams, true);
  t.equal(m!.crc, bytes.readUInt32LE(72));
  t.equal(m!.crc, crc32c(Buffer.concat([bytes.subarray(0, 72), bytes.subarray(76, m!.headerLength)])), 'CRC-32C over the fixed header (before it) and the directory');
  t.equal(bytes.readUInt32LE(68), crc32c(bytes.subarray(m!.headerLength, m!.headerLength + 256)), 'CRC-32C of both filters');
  t.ok(blockIntact(bytes, 0, m!));
  const decoded = decodeBlockEvents(bytes, 0, m!, lz4Codec);
  t.strictSame(decoded, events, 'every value, fields only where present');
  t.strictSame(Object.keys(decoded[1]!.fields), [], 'no field on the event that had none');
  t.strictSame(Object.keys(decoded[0]!.fields).sort(), ['a', 'only1']);
  t.equal(decoded[2]!.fields['a'], '', 'an empty field value is kept (not treated as absent)');
  // The same content as a format 4 block (one LZ4 body), as older segments hold it.
  const v4 = assembleBlockV4(encodeBlockContent(columnsOf(events)), lz4Codec);
  const m4 = readBlockMeta(v4, 0)!;
  t.equal(m4.headerLength, 68);
  t.notOk(m4.framed);
  t.equal(v4.length, 68 + m4.bloomLength + m4.gramLength + m4.compressedLength);
  t.equal(m4.crc, crc32c(Buffer.concat([v4.subarray(0, 64), v4.subarray(68)])), 'format 4: CRC-32C over header (minus CRC), bloom, gram filter and body');
  t.ok(blockIntact(v4, 0, m4));
  t.strictSame(decodeBlockEvents(v4, 0, m4, lz4Codec), events, 'format 4 reads back the same');
});

t.test('a block inside a bigger buffer is read at its position', async (t) => {
  const evs = makeEvents(50, 1000);
  const block = encodeBlock(columnsOf(evs), lz4Codec);
  const prefix = Buffer.from('some bytes before the block');
  const buf = Buffer.concat([prefix, block, Buffer.from('trailing')]);
  const m = readBlockMeta(buf, prefix.length)!;
  t.equal(m.eventCount, 50);
  t.equal(m.firstOffset, 1000);
  t.equal(m.firstIndex, 0);
  t.equal(m.lastOffset, 1000 + 16 * 100);
  t.equal(m.lastIndex, 1);
  t.equal(m.minTs, Math.min(...evs.map((e) => e.timestamp)));
  t.equal(m.maxTs, Math.max(...evs.map((e) => e.timestamp)));
  t.ok(blockIntact(buf, prefix.length, m));
  t.strictSame(decodeBlockEvents(buf, prefix.length, m, lz4Codec), evs);
  t.equal(readBlockMeta(buf, 0), null, 'no magic at 0');
  t.equal(readBlockMeta(block.subarray(0, 83), 0), null, 'incomplete header');
  t.not(readBlockMeta(block.subarray(0, 84), 0), null, 'a complete fixed header is enough for the meta');
  t.notOk(blockIntact(block.subarray(0, m.headerLength), 0, m), 'the header alone is not intact');
  t.notOk(blockIntact(block.subarray(0, block.length - 1), 0, m), 'one byte short is not intact');
});

t.test('encodeBlock refuses an empty block', async (t) => {
  t.throws(() => encodeBlock(emptyColumns(), lz4Codec), { code: 'E_INTERNAL', message: /empty block/ });
});

t.test('blockIntact is false after any single bit flip anywhere in the block', async (t) => {
  const block = encodeBlock(columnsOf(makeEvents(40)), lz4Codec);
  let flips = 0;
  let undetected = 0;
  for (let pos = 0; pos < block.length; pos++) {
    for (let bit = 0; bit < 8; bit++) {
      block[pos]! ^= 1 << bit;
      // What a reader does: read the (possibly damaged) header, then check the CRC.
      const m = readBlockMeta(block, 0);
      if (m !== null && blockIntact(block, 0, m)) undetected++;
      block[pos]! ^= 1 << bit;
      flips++;
    }
  }
  t.equal(flips, block.length * 8, `${flips} flips over ${block.length} bytes`);
  t.equal(undetected, 0, 'every flip detected');
  t.ok(blockIntact(block, 0, readBlockMeta(block, 0)!), 'restored block is intact again');
});

t.test('the bloom of a block holds raw-text tokens and field values', async (t) => {
  const events: StoredEvent[] = [
    { timestamp: 1, timezone: 'Z', rawstring: 'GET /api/Users?id=42 status=200 Ünïcode', fields: { method: 'POST', path: '/Checkout/Cart' }, ingestTimestamp: 1, offset: 0, index: 0 },
  ];
  const bytes = encodeBlock(columnsOf(events), lz4Codec);
  const m = readBlockMeta(bytes, 0)!;
  const bloom = blockBloom(bytes, 0, m);
  t.equal(bloom.length, m.bloomLength);
  for (const tok of ['get', 'api', 'users', 'USERS', 'id', '42', 'status', '200', 'ünïcode', 'post', 'checkout', 'cart', '/checkout/cart', 'POST']) {
    t.ok(bloomMayContain(bloom, tok), `contains ${tok}`);
  }
  let absent = 0;
  for (const tok of ['delete', 'orders', 'xyzzy', 'status=200', '/api/users?id=42', 'nope', 'missing']) if (!bloomMayContain(bloom, tok)) absent++;
  t.ok(absent >= 5, `absent tokens mostly rejected (${absent}/7)`);
});

t.test('the gram filter of a block holds substrings of the token runs of @rawstring and of every field value (format 4)', async (t) => {
  const events: StoredEvent[] = [
    { timestamp: 1, timezone: 'Z', rawstring: 'GET /api/Users?id=42 session=Zq7Xk2vBlm', fields: { path: '/Checkout/Cart' }, ingestTimestamp: 1, offset: 0, index: 0 },
  ];
  const bytes = encodeBlock(columnsOf(events), lz4Codec);
  const m = readBlockMeta(bytes, 0)!;
  const grams = blockGrams(bytes, 0, m);
  t.equal(grams.length, m.gramLength);
  for (const w of ['user', 'SERS', 'q7xk2v', 'zq7xk2vblm', 'checkout', 'cart', 'heckou']) t.ok(gramFilterMayContain(grams, gramProbes(fold(w))), `holds ${w}`);
  let absent = 0;
  for (const w of ['checkoutcart', 'sersid', 'xk2vbq', 'missing', 'nothing']) if (!gramFilterMayContain(grams, gramProbes(fold(w)))) absent++;
  t.ok(absent >= 4, `absent words mostly rejected (${absent}/5), across token runs too`);
});

t.test('format 1 blocks (LBLK, 64-byte header, no gram filter) are still read', async (t) => {
  const events = makeEvents(3, 500);
  const v2 = assembleBlockV4(encodeBlockContent(columnsOf(events)), lz4Codec);
  const m2 = readBlockMeta(v2, 0)!;
  // The same block in the format 1 layout: header without the gram length, no gram filter.
  const header = Buffer.alloc(64);
  v2.copy(header, 0, 0, 60);
  Buffer.from('LBLK').copy(header, 0);
  const bloom = blockBloom(v2, 0, m2);
  const body = v2.subarray(bodyOffset(m2));
  header.writeUInt32LE(crc32c(body, crc32c(bloom, crc32c(header.subarray(0, 60)))), 60);
  const v1 = Buffer.concat([header, bloom, body]);
  const m1 = readBlockMeta(v1, 0)!;
  t.match(m1, { headerLength: 64, gramLength: 0, bloomLength: m2.bloomLength, compressedLength: m2.compressedLength, eventCount: 3 });
  t.ok(blockIntact(v1, 0, m1));
  t.equal(blockLength(m1), v1.length);
  t.equal(blockGrams(v1, 0, m1).length, 0);
  t.strictSame(decodeBlockEvents(v1, 0, m1, lz4Codec), events);
});

t.test('timestamps anywhere in the Date range (±8.64e15 ms, what ingest accepts) round-trip exactly', async (t) => {
  // src/ingest/parsers/json.ts accepts epoch milliseconds with |v| <= 8.64e15; a block must store
  // them exactly (or refuse them loudly), never decode a different timestamp.
  const cases: number[][] = [
    [8.64e15, -8.64e15],
    [-8.64e15 + 1],
    [-(2 ** 52) - 1, 5],
    [8.64e15 - 1, 0, -1],
    [6e15 + 1, 1_700_000_000_001], // a far-future event followed by an ordinary one
  ];
  for (const ts of cases) {
    const evs: StoredEvent[] = ts.map((x, i) => ({ timestamp: x, timezone: 'Z', rawstring: `e${i}`, fields: {}, ingestTimestamp: 1_700_000_000_000, offset: 0, index: i }));
    let decoded: number[] | string;
    try {
      const b = encodeBlock(columnsOf(evs), lz4Codec);
      const m = readBlockMeta(b, 0)!;
      t.equal(m.minTs, Math.min(...ts), `header minTs for ${JSON.stringify(ts)}`);
      t.equal(m.maxTs, Math.max(...ts), `header maxTs for ${JSON.stringify(ts)}`);
      decoded = decodeBlockEvents(b, 0, m, lz4Codec).map((e) => e.timestamp);
    } catch (err) {
      decoded = `refused: ${(err as Error).message}`;
    }
    t.strictSame(decoded, ts, `timestamps ${JSON.stringify(ts)} decode unchanged`);
  }
});
