/**
 * Column summaries (segment format 6, summaries.ts): which columns get one, what they say, that a
 * block reads back to the same events as format 5 with a summarised dictionary's entries moved to
 * its head, and that a summary that does not add up makes the head damaged.
 */
import t from 'tap';
import { assembleBlock, assembleBlockV5, blockDirectory, blockIntact, decodeBlockEvents, encodeBlockContent, readBlockMeta } from '../../../src/segments/block.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { frameBody, parseDirectory, splitBody } from '../../../src/segments/frames.js';
import { parseSummaries, SUMMARY_MAX_ENTRIES } from '../../../src/segments/summaries.js';
import { unpack } from '../../../src/lib/msgpack.js';
import { columnsOf } from './helpers.js';
import type { StoredEvent } from '../../../src/segments/block.js';

function events(n: number, wide = SUMMARY_MAX_ENTRIES + 10): StoredEvent[] {
  return Array.from({ length: n }, (_, i) => {
    const fields: Record<string, string> = { size: String(i * 3 - 50), many: `m${i % wide}` };
    if (i % 4 !== 0) fields['method'] = ['GET', 'POST', 'PUT'][i % 3]!;
    return { timestamp: 1_700_000_000_000 + i * 7_000, timezone: 'Z', rawstring: `req ${i} ${fields['method'] ?? '-'}`, fields, ingestTimestamp: 1, offset: i, index: 0 };
  });
}

t.test('format 6: summaries of the small dictionaries, the integer columns and the minutes; the same events as format 5', async (t) => {
  const evs = events(1000);
  const content = encodeBlockContent(columnsOf(evs));
  const b6 = assembleBlock(content, lz4Codec);
  const m = readBlockMeta(b6, 0)!;
  t.ok(blockIntact(b6, 0, m));
  t.equal(b6[80], 1, 'the head section is LZ4-compressed (smaller so)');
  const dir = blockDirectory(b6.subarray(0, m.headerLength), m)!;
  const by = (name: string) => dir.columns.find((c) => c.name === name)!;
  const rows = (v: string) => evs.filter((e) => e.fields['method'] === v).length;
  t.strictSame(by('method').summary, { kind: 'dict', d: ['POST', 'PUT', 'GET'], counts: [rows('POST'), rows('PUT'), rows('GET')], absent: 250 }, 'entries in order of first occurrence with their rows, and the rows without the field');
  t.equal(by('many').summary, undefined, `a dictionary of more than ${SUMMARY_MAX_ENTRIES} entries has none`);
  t.strictSame(by('size').summary, { kind: 'ints', n: 1000, min: -50, max: 2947, sum: evs.reduce((a, e) => a + Number(e.fields['size']), 0) });
  const minutes = dir.columns[0]!.summary as { kind: 'minutes'; first: number; counts: number[] };
  t.equal(minutes.kind, 'minutes');
  t.equal(minutes.first, Math.floor(1_700_000_000_000 / 60_000) * 60_000);
  t.equal(minutes.counts.reduce((a, x) => a + x, 0), 1000, 'every event in a minute');
  t.equal(by('tz').summary, undefined, 'built-ins other than ts have none');
  // The summarised dictionary's frame keeps its codes only.
  const f = by('method');
  const frameStart = m.headerLength + m.bloomLength + m.gramLength + dir.frames[f.frame]!.at;
  const stored = b6.subarray(frameStart, frameStart + dir.frames[f.frame]!.stored);
  const plain = dir.frames[f.frame]!.codec === 1 ? lz4Codec.decompress(stored) : stored;
  t.strictSame(Object.keys(unpack(plain.subarray(f.offset, f.offset + f.length)) as object).sort(), ['e', 'i', 'w'], 'no entries in the frame');
  const b5 = assembleBlockV5(content, lz4Codec);
  t.strictSame(decodeBlockEvents(b6, 0, m, lz4Codec), decodeBlockEvents(b5, 0, readBlockMeta(b5, 0)!, lz4Codec), 'the same events as format 5');
  t.strictSame(decodeBlockEvents(b6, 0, m, lz4Codec), evs);
});

/** Where the summaries section of a format 6 directory starts: past the frames and the columns. */
function sectionStart(directory: Buffer): number {
  let q = 4 + directory.readUInt32LE(0) * 13;
  const k = directory.readUInt32LE(q);
  q += 4;
  for (let c = 0; c < k; c++) q += 14 + directory.readUInt16LE(q + 12);
  return q;
}

t.test('summaries that do not add up make the directory damaged', async (t) => {
  const content = encodeBlockContent(columnsOf(events(200)));
  const { directory, stored } = frameBody(content.body, lz4Codec, 200);
  const dir = parseDirectory(directory, stored, 200);
  t.not(dir, null, 'intact');
  t.equal(parseDirectory(directory, stored, 201), null, 'counts that do not total the event count');
  t.equal(parseDirectory(directory, stored), null, 'read as format 5: bytes left over');
  t.equal(parseDirectory(Buffer.concat([directory, Buffer.from([0])]), stored, 200), null, 'a byte past the summaries');
  const at = sectionStart(directory);
  t.not(parseSummaries(directory, at, dir!.columns, 200), null, 'the section parses on its own');
  t.equal(parseSummaries(directory.subarray(0, directory.length - 1), at, dir!.columns, 200), null, 'cut short');
  // The first summary is the minutes of ts (column 0, kind 3): point it at another column.
  t.equal(directory.readUInt32LE(at + 4), 0);
  t.equal(directory[at + 8], 3);
  const moved = Buffer.from(directory);
  moved.writeUInt32LE(1, at + 4);
  t.equal(parseDirectory(moved, stored, 200), null, 'a minutes summary of another column');
  const kind = Buffer.from(directory);
  kind[at + 8] = 2;
  t.equal(parseDirectory(kind, stored, 200), null, 'an integer summary of the timestamps');
  const size = splitBody(content.body).findIndex((p) => p.name === 'size');
  t.equal(dir!.columns[size]!.summary?.kind, 'ints');
});

t.test('a damaged head section fails the block, before any frame', async (t) => {
  const b6 = assembleBlock(encodeBlockContent(columnsOf(events(300))), lz4Codec);
  const m = readBlockMeta(b6, 0)!;
  const bad = Buffer.from(b6);
  bad[90]! ^= 0x5a;
  t.notOk(blockIntact(bad, 0, m), 'its checksum fails');
  const small = assembleBlock(encodeBlockContent(columnsOf(events(3, 3))), lz4Codec);
  const ms = readBlockMeta(small, 0)!;
  t.ok(blockIntact(small, 0, ms), 'a small block');
  t.not(blockDirectory(small.subarray(0, ms.headerLength), ms), null);
});

t.test('a text column of integer texts gets the integers summary (rows holding one counted); other texts none', async (t) => {
  const make = (value: (i: number) => string | undefined) =>
    Array.from({ length: 400 }, (_, i): StoredEvent => {
      const v = value(i);
      return { timestamp: 1_700_000_000_000 + i, timezone: 'Z', rawstring: `e${i}`, fields: v === undefined ? {} : { b: v }, ingestTimestamp: 1, offset: i, index: 0 };
    });
  const summaryOf = (evs: StoredEvent[]) => {
    const bytes = assembleBlock(encodeBlockContent(columnsOf(evs)), lz4Codec);
    const m = readBlockMeta(bytes, 0)!;
    const col = blockDirectory(bytes.subarray(0, m.headerLength), m)!.columns.find((c) => c.name === 'b')!;
    return { e: col.e, summary: col.summary };
  };
  const ints = (i: number) => (i % 5 === 0 ? undefined : String(i * 37 - 5000));
  const values = make(ints).flatMap((e) => (e.fields['b'] === undefined ? [] : [Number(e.fields['b'])]));
  t.strictSame(summaryOf(make(ints)), { e: 'u', summary: { kind: 'ints', n: 320, min: Math.min(...values), max: Math.max(...values), sum: values.reduce((a, x) => a + x, 0) } });
  for (const [what, odd] of [['a leading zero', '007'], ['-0', '-0'], ['a fraction', '1.5'], ['16 characters', '1234567890123456'], ['a word', 'x']] as const) {
    t.strictSame(summaryOf(make((i) => (i === 200 ? odd : ints(i)))).summary, undefined, `${what}: none`);
  }
});
