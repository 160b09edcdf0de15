import t from 'tap';
import { copyFile, readdir, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeBlockEvents, type StoredEvent } from '../../../src/segments/block.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { encodeFooter, encodeSegmentHeader, FOOTER_MAGIC, parseSegment, SEGMENT_FORMAT_VERSION, SEGMENT_MAGIC, TRAILER_BYTES, type ParsedSegment } from '../../../src/segments/segment-file.js';
import { SegmentWriter } from '../../../src/segments/segment-writer.js';
import { pack } from '../../../src/lib/msgpack.js';
import { crc32c } from '../../../src/storage/index.js';
import { blockOf, makeEvents, segMeta, tempDir, writeSegment } from './helpers.js';

const allEvents = (buf: Buffer, seg: ParsedSegment): StoredEvent[] => seg.blocks.flatMap((b) => decodeBlockEvents(buf, b.pos, b, lz4Codec));

/** Three blocks of different sizes at increasing offsets. */
const threeBlocks = (): StoredEvent[][] => [makeEvents(30, 0), makeEvents(12, 10_000, 30), makeEvents(45, 20_000, 42)];

t.test('constants and header layout', async (t) => {
  t.equal(SEGMENT_FORMAT_VERSION, 6);
  t.ok(SEGMENT_MAGIC.equals(Buffer.from('LSEG')));
  t.ok(FOOTER_MAGIC.equals(Buffer.from('LSEF')));
  t.equal(TRAILER_BYTES, 12);
  const meta = segMeta('seg-1');
  const h = encodeSegmentHeader(meta);
  const body = pack(meta);
  t.ok(h.subarray(0, 4).equals(SEGMENT_MAGIC));
  t.equal(h.readUInt32LE(4), 6);
  t.equal(h.readUInt32LE(8), body.length);
  t.equal(h.readUInt32LE(12), crc32c(body));
  t.ok(h.subarray(16).equals(body));
});

t.test('create + append + close -> parseSegment gives the blocks and a footer', async (t) => {
  const dir = await tempDir(t);
  const meta = segMeta('closed-1');
  const blocks = threeBlocks();
  const w = await SegmentWriter.create(join(dir, 'sandbox', 'dsA'), meta);
  t.equal(w.path, join(dir, 'sandbox', 'dsA', 'closed-1.seg'));
  const headerLen = encodeSegmentHeader(meta).length;
  t.equal(w.bytes, headerLen);
  t.equal(w.blockCount, 0);
  const expectPos: number[] = [];
  let pos = headerLen;
  for (const evs of blocks) {
    const b = blockOf(evs);
    const entry = await w.append(b.bytes, b.meta);
    t.strictSame(entry, { ...b.meta, pos }, 'append returns the entry with its position');
    expectPos.push(pos);
    pos += b.bytes.length;
    t.equal(w.bytes, pos);
  }
  t.equal(w.blockCount, 3);
  const footer = await w.close(1_700_000_999_000);
  t.equal(footer.eventCount, 87);
  t.equal(footer.closedAt, 1_700_000_999_000);
  t.equal(footer.minTs, Math.min(...blocks.flat().map((e) => e.timestamp)));
  t.equal(footer.maxTs, Math.max(...blocks.flat().map((e) => e.timestamp)));

  const buf = await readFile(w.path);
  t.equal(buf.length, w.bytes, 'bytes counts the footer too');
  const seg = parseSegment(buf, w.path);
  t.strictSame(seg.meta, meta);
  t.equal(seg.blocksStart, headerLen);
  t.strictSame(seg.blocks.map((b) => b.pos), expectPos);
  t.strictSame(seg.blocks.map((b) => b.eventCount), [30, 12, 45]);
  t.strictSame(seg.blocks.map((b) => [b.firstOffset, b.firstIndex, b.lastOffset, b.lastIndex]), [
    [0, 0, 900, 2],
    [10_000, 0, 10_300, 2],
    [20_000, 0, 21_400, 2],
  ]);
  t.equal(seg.blocksEnd, pos);
  t.strictSame(seg.damage, []);
  t.not(seg.footer, null);
  t.strictSame(seg.footer, footer, 'the footer on disk is the one close returned');
  t.strictSame(seg.footer!.blocks, seg.blocks, 'footer lists exactly the scanned blocks');
  t.strictSame(allEvents(buf, seg), blocks.flat(), 'every event decodes');
  // Trailer layout.
  t.ok(buf.subarray(buf.length - 4).equals(FOOTER_MAGIC));
  const flen = buf.readUInt32LE(buf.length - 12);
  t.equal(buf.length - 12 - flen, pos, 'footer starts right after the last block');
  t.equal(buf.readUInt32LE(buf.length - 8), crc32c(buf.subarray(pos, pos + flen)));

  await t.rejects(SegmentWriter.create(join(dir, 'sandbox', 'dsA'), meta), { code: 'EEXIST' }, 'an existing segment is never overwritten');
});

t.test('an open segment (no close) parses with footer null', async (t) => {
  const dir = await tempDir(t);
  const blocks = threeBlocks();
  const w = await writeSegment(dir, segMeta('open-1'), blocks, false);
  t.teardown(() => w.close(0));
  const buf = await readFile(w.path);
  t.equal(buf.length, w.bytes);
  const seg = parseSegment(buf, 'open-1');
  t.equal(seg.footer, null);
  t.equal(seg.blocks.length, 3);
  t.strictSame(seg.damage, []);
  t.equal(seg.blocksEnd, buf.length);
  t.strictSame(allEvents(buf, seg), blocks.flat());

  const empty = await writeSegment(dir, segMeta('open-empty'), [], false);
  t.teardown(() => empty.close(0));
  const eb = await readFile(empty.path);
  const es = parseSegment(eb, 'open-empty');
  t.strictSame([es.blocks, es.footer, es.damage, es.blocksEnd], [[], null, [], eb.length]);
});

t.test('a torn last block of an open segment: damage at the tail; recoverOpen cuts it and closes', async (t) => {
  const dir = await tempDir(t);
  const blocks = threeBlocks();
  const w = await writeSegment(dir, segMeta('torn'), blocks, false);
  const full = await readFile(w.path);
  await w.close(0);
  const pristine = parseSegment(full, 'pristine');
  const lastPos = pristine.blocks[2]!.pos;
  const cuts = [lastPos + 1, lastPos + 4, lastPos + 67, lastPos + 68, lastPos + 69, lastPos + 200, full.length - 1];
  for (const [i, cut] of cuts.entries()) {
    const path = join(dir, `torn-${i}.seg`);
    await writeFile(path, full.subarray(0, cut));
    const buf = await readFile(path);
    const seg = parseSegment(buf, path);
    t.equal(seg.footer, null, `cut ${cut}: no footer`);
    t.strictSame(seg.blocks.map((b) => b.pos), pristine.blocks.slice(0, 2).map((b) => b.pos), `cut ${cut}: the two earlier blocks`);
    t.strictSame(seg.damage, [{ at: lastPos, to: cut, reason: cut - lastPos < 76 ? 'no block header' : 'block extends past the end' }], `cut ${cut}: damage at the tail`);
    t.equal(seg.blocksEnd, lastPos);

    const footer = await SegmentWriter.recoverOpen(path, seg, buf, 1_700_001_000_000 + i);
    t.strictSame(footer.blocks, seg.blocks);
    t.equal(footer.eventCount, 42);
    t.equal(footer.closedAt, 1_700_001_000_000 + i);
    const aside = `${path}.damaged-${1_700_001_000_000 + i}`;
    t.ok((await readFile(aside)).equals(full.subarray(lastPos, cut)), 'the cut bytes are kept aside');
    const after = await readFile(path);
    const reparsed = parseSegment(after, path);
    t.strictSame(reparsed.damage, [], 'closed cleanly');
    t.strictSame(reparsed.footer, footer);
    t.strictSame(reparsed.blocks, seg.blocks);
    t.ok(after.subarray(0, lastPos).equals(full.subarray(0, lastPos)), 'earlier bytes untouched');
    t.strictSame(allEvents(after, reparsed), blocks.slice(0, 2).flat());
  }
});

t.test('recoverOpen of an intact open segment only adds the footer', async (t) => {
  const dir = await tempDir(t);
  const blocks = threeBlocks();
  const w = await writeSegment(dir, segMeta('open-ok'), blocks, false);
  const copy = join(dir, 'copy.seg');
  await copyFile(w.path, copy);
  await w.close(0);
  const buf = await readFile(copy);
  const seg = parseSegment(buf, copy);
  const footer = await SegmentWriter.recoverOpen(copy, seg, buf, 42);
  t.equal(footer.eventCount, 87);
  const after = await readFile(copy);
  t.ok(after.subarray(0, buf.length).equals(buf));
  t.strictSame(parseSegment(after, copy).footer, footer);
  t.strictSame((await readdir(dir)).filter((n) => n.includes('.damaged-')), [], 'nothing set aside');
});

t.test('a bit flip in a middle block of a closed segment: that block is damage, the rest still read', async (t) => {
  const dir = await tempDir(t);
  const blocks = [makeEvents(20, 0), makeEvents(20, 5000, 20), makeEvents(20, 9000, 40), makeEvents(20, 14_000, 60)];
  const w = await writeSegment(dir, segMeta('flip'), blocks, true);
  const full = await readFile(w.path);
  const pristine = parseSegment(full, 'p');
  const victim = pristine.blocks[1]!;
  const next = pristine.blocks[2]!;
  const positions: number[] = [];
  for (let p = victim.pos; p < next.pos; p += p < victim.pos + 64 ? 1 : 7) positions.push(p);
  let bad = 0;
  for (const p of positions) {
    const buf = Buffer.from(full);
    buf[p]! ^= 1 << (p % 8);
    const seg = parseSegment(buf, 'flipped');
    const ok =
      seg.footer !== null &&
      seg.footer.blocks.length === 4 &&
      JSON.stringify(seg.blocks.map((b) => b.pos)) === JSON.stringify([pristine.blocks[0]!.pos, next.pos, pristine.blocks[3]!.pos]) &&
      seg.damage.length === 1 &&
      seg.damage[0]!.at === victim.pos &&
      seg.damage[0]!.to === next.pos &&
      JSON.stringify(allEvents(buf, seg)) === JSON.stringify([...blocks[0]!, ...blocks[2]!, ...blocks[3]!]);
    if (!ok) {
      bad++;
      if (bad <= 3) t.fail(`flip at ${p}: ${JSON.stringify({ blocks: seg.blocks.map((b) => b.pos), damage: seg.damage, footer: seg.footer !== null })}`);
    }
  }
  t.equal(bad, 0, `${positions.length} flip positions: exactly the victim block is lost`);

  const buf = Buffer.from(full);
  buf[victim.pos + 100]! ^= 0x10;
  t.equal(parseSegment(buf, 'x').damage[0]!.reason, 'block checksum mismatch');
  buf[victim.pos + 100]! ^= 0x10;
  buf[victim.pos]! ^= 0x01;
  t.equal(parseSegment(buf, 'x').damage[0]!.reason, 'no block header');
});

t.test('a damaged footer: no footer, the old footer bytes are tail damage, recoverOpen rewrites it', async (t) => {
  const dir = await tempDir(t);
  const blocks = threeBlocks();
  const w = await writeSegment(dir, segMeta('badfooter'), blocks, true);
  const full = await readFile(w.path);
  const blocksEnd = parseSegment(full, 'p').blocksEnd;
  const buf = Buffer.from(full);
  buf[blocksEnd + 3]! ^= 0x40; // inside the footer body
  await writeFile(w.path, buf);
  const seg = parseSegment(buf, w.path);
  t.equal(seg.footer, null);
  t.equal(seg.blocks.length, 3);
  t.strictSame(seg.damage, [{ at: blocksEnd, to: buf.length, reason: 'no block header' }]);
  const footer = await SegmentWriter.recoverOpen(w.path, seg, buf, 7);
  const after = await readFile(w.path);
  t.strictSame(parseSegment(after, w.path).footer, footer);
  t.strictSame(parseSegment(after, w.path).damage, []);
  t.equal(footer.eventCount, 87);
});

t.test('an unusable header is E_STATE_CORRUPT', async (t) => {
  const dir = await tempDir(t);
  const w = await writeSegment(dir, segMeta('hdr'), threeBlocks(), true);
  const full = await readFile(w.path);
  t.throws(() => parseSegment(full.subarray(0, 15), 'short'), { code: 'E_STATE_CORRUPT', message: /segment short: bad header/ });
  const magic = Buffer.from(full);
  magic[0] = 0x58;
  t.throws(() => parseSegment(magic, 'magic'), { code: 'E_STATE_CORRUPT', message: /bad header/ });
  const version = Buffer.from(full);
  version.writeUInt32LE(7, 4);
  t.throws(() => parseSegment(version, 'v7'), { code: 'E_STATE_CORRUPT', message: /unsupported format version 7/ });
  const v1 = Buffer.from(full);
  v1.writeUInt32LE(1, 4);
  const asV1 = parseSegment(v1, 'v1');
  t.equal(asV1.blocks.length, 0, 'format 5 blocks in a file that says format 1 are not taken for blocks');
  t.equal(asV1.damage.length, 1);
  const meta = Buffer.from(full);
  meta[20]! ^= 0x01;
  t.throws(() => parseSegment(meta, 'meta'), { code: 'E_STATE_CORRUPT', message: /header checksum mismatch/ });
  const cut = full.subarray(0, 16 + full.readUInt32LE(8) - 1);
  t.throws(() => parseSegment(cut, 'cut'), { code: 'E_STATE_CORRUPT', message: /header checksum mismatch/ });
});

t.test('encodeFooter trailer layout', async (t) => {
  const f = { blocks: [], eventCount: 0, minTs: Infinity, maxTs: -Infinity, closedAt: 5 };
  const bytes = encodeFooter(f);
  const body = pack(f);
  t.equal(bytes.length, body.length + 12);
  t.equal(bytes.readUInt32LE(body.length), body.length);
  t.equal(bytes.readUInt32LE(body.length + 4), crc32c(body));
  t.ok(bytes.subarray(body.length + 8).equals(FOOTER_MAGIC));
  // A closed segment with no blocks.
  const dir = await tempDir(t);
  const w = await writeSegment(dir, segMeta('empty'), [], true, 5);
  const seg = parseSegment(await readFile(w.path), 'empty');
  t.strictSame(seg.footer, f);
  t.strictSame(seg.blocks, []);
  t.equal((await stat(w.path)).size, seg.blocksStart + bytes.length);
});

t.test('truncate helper sanity: a segment cut exactly at a block boundary has no damage', async (t) => {
  const dir = await tempDir(t);
  const w = await writeSegment(dir, segMeta('boundary'), threeBlocks(), true);
  const seg = parseSegment(await readFile(w.path), 'b');
  await truncate(w.path, seg.blocks[2]!.pos);
  const cut = parseSegment(await readFile(w.path), 'b');
  t.equal(cut.footer, null);
  t.equal(cut.blocks.length, 2);
  t.strictSame(cut.damage, []);
});
