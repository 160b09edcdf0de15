/**
 * Format 5 column frames (src/segments/frames.ts): the body is cut into one frame per column
 * exactly (no byte lost or added), a query reads only the frames it needs, and a damaged frame
 * leaves its block out of a scan with a warning while the other blocks are still answered.
 */
import t from 'tap';
import { readFile, writeFile } from 'node:fs/promises';
import { encodeBlockContent, encodedBlockAt, readBlockMeta, assembleBlock } from '../../../src/segments/block.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { BUILTIN_COLUMNS, splitBody, wholeBody } from '../../../src/segments/frames.js';
import { unpack } from '../../../src/lib/msgpack.js';
import { parseSegment } from '../../../src/segments/segment-file.js';
import { readSegmentInfo } from '../../../src/segments/catalog.js';
import { createLogger } from '../../../src/lib/logger.js';
import { runScanTask } from '../../../src/query/scan.js';
import { DEFAULT_LIMITS } from '../../../src/query/runtime.js';
import { columnsOf, makeEvents, segMeta, tempDir, writeSegment } from './helpers.js';

t.test('splitBody cuts a body into its columns: built-ins first, then the fields in body order', async (t) => {
  const content = encodeBlockContent(columnsOf(makeEvents(50)));
  const parts = splitBody(content.body);
  t.strictSame(parts.slice(0, 6).map((p) => p.name), [...BUILTIN_COLUMNS]);
  const body = unpack(content.body) as Record<string, unknown> & { fields: [string, { e: string }][] };
  t.strictSame(parts.slice(6).map((p) => [p.name, p.e]), body.fields.map(([name, c]) => [name, c.e]), 'field names and encodings, in order');
  for (const p of parts.slice(0, 6)) t.strictSame(unpack(content.body.subarray(p.start, p.end)), body[p.name], `${p.name}: its own msgpack value`);
  for (const [j, p] of parts.slice(6).entries()) t.strictSame(unpack(content.body.subarray(p.start, p.end)), body.fields[j]![1], `${p.name}: its own msgpack value`);
  const block = assembleBlock(content, lz4Codec);
  t.strictSame(wholeBody(encodedBlockAt(block, 0, readBlockMeta(block, 0)!, lz4Codec)), { ...body, n: 50 }, 'the frames read back as the body');
});

t.test('only the columns asked for are decompressed', async (t) => {
  const block = assembleBlock(encodeBlockContent(columnsOf(makeEvents(80))), lz4Codec);
  const m = readBlockMeta(block, 0)!;
  const codec = { ...lz4Codec, calls: 0 };
  const counting = { name: 'lz4', compress: lz4Codec.compress, decompress: (b: Buffer) => (codec.calls++, lz4Codec.decompress(b)) };
  const enc = encodedBlockAt(block, 0, m, counting);
  t.equal(codec.calls, 0, 'nothing before a column is asked for');
  const j = enc.names.indexOf('seq');
  t.equal(enc.encoding(j), 'i', 'the encoding is known from the directory');
  enc.field(j);
  enc.field(j);
  t.ok(codec.calls <= 1, `one frame at most (${codec.calls} decompressions; a tiny frame is stored as is)`);
});

t.test('a damaged column frame: the block is left out with a warning, the other blocks still answer', async (t) => {
  const dir = await tempDir(t);
  // Blocks large enough that the larger columns (timestamps, raw strings, seq) have frames of their own.
  const blocks = [makeEvents(3000, 0), makeEvents(3000, 100_000, 3000), makeEvents(3000, 200_000, 6000)];
  const w = await writeSegment(dir, segMeta('dmg'), blocks, true);
  const buf = Buffer.from(await readFile(w.path));
  const seg = parseSegment(buf, 'dmg');
  const b1 = seg.blocks[1]!;
  // The last frame of block 1 (small field columns, "five" among them): one byte flipped.
  const end = b1.pos + b1.headerLength + b1.bloomLength + b1.gramLength + b1.compressedLength;
  buf[end - 2]! ^= 0x40;
  await writeFile(w.path, buf);
  const info = await readSegmentInfo(w.path, createLogger('error'), Date.now());
  const ctx = { start: 0, end: 2_000_000_000_000, timeZoneOffsetMinutes: 0, now: 2_000_000_000_000, live: false };
  const scan = (text: string, perEvent = false) =>
    runScanTask({ spec: { text, args: {}, ctx, limits: DEFAULT_LIMITS }, repoName: 'r', units: [{ kind: 'seg', path: w.path, partition: 3, tags: {}, blocks: info.blocks }], deadline: Date.now() + 60_000, perEvent });
  // The catalog trusts the footer for positions; the scan checks each frame it reads.
  t.equal(parseSegment(buf, 'dmg').damage.length, 1, 'parseSegment finds the damage (every frame checked)');
  t.ok(info.blocks.every((b) => b.framed === true), 'format 5 blocks');
  for (const perEvent of [false, true]) {
    const all = scan('count()', perEvent);
    t.equal(all.matched, 9000, 'count(): from the headers, or from the timestamps (an intact frame)');
    const r = scan('* | groupBy(five)', perEvent);
    t.equal(r.warnings.length, 1, `${perEvent ? 'per event' : 'columns'}: one warning`);
    t.match(r.warnings[0], /block at \d+ is damaged and was left out/);
  }
  // Each frame has its own checksum: a query that reads only intact columns of the block is answered.
  const ok = scan('seq=4500 | count()');
  t.strictSame([ok.matched, ok.warnings], [1, []], 'an intact column of the damaged block still answers');
});
