/**
 * The golden segments. Format 6 (today's: each block column its own frame, summaries of some columns in the block's head): the fixture must keep reading back to exactly these
 * events, and today's encoder must still produce it byte for byte (a difference means the format
 * changed: bump SEGMENT_FORMAT_VERSION and add a new fixture, keeping the old ones readable).
 * Regenerate deliberately with UPDATE_GOLDEN=1. Formats 1 (no gram filter), 2 (no text or
 * template columns), 3 (grams of @rawstring only), 4 (one LZ4 body per block) and 5 (column frames, no summaries) were written by earlier builds: they must
 * still read back, through the catalog and through queries.
 */
import t, { type Test } from 'tap';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addEvent, blockDirectory, decodeBlockEvents, emptyColumns, encodeBlock, encodedBlockAt, readBlockMeta, type BlockBody, type StoredEvent } from '../../../src/segments/block.js';
import { wholeBody } from '../../../src/segments/frames.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { encodeFooter, encodeSegmentHeader, parseSegment, SEGMENT_FORMAT_VERSION, summarize, type BlockEntry, type ParsedSegment } from '../../../src/segments/segment-file.js';
import { readSegmentInfo } from '../../../src/segments/catalog.js';
import { createLogger } from '../../../src/lib/logger.js';
import { runScanTask } from '../../../src/query/scan.js';
import { DEFAULT_LIMITS } from '../../../src/query/runtime.js';

const fixture = (v: number): string => fileURLToPath(new URL(`../../fixtures/segments/v${v}/golden.seg`, import.meta.url));
const FIXTURE = fixture(6);
/** Written by earlier builds: v1 (no gram filter), v2 (no text or template columns), v3 (grams of @rawstring only), v4 (one LZ4 body per block), v5 (column frames without summaries). */
const OLD_FIXTURES = [fixture(1), fixture(2), fixture(3), fixture(4), fixture(5)];

const META = {
  id: 'golden-p3-000000000001',
  repo: 'repo-golden',
  ds: 'ds-golden-0000000000000',
  tags: { host: 'web-1', type: 'accesslog' },
  partition: 3,
  createdAt: 1_700_000_000_000,
};

function events(block: number): StoredEvent[] {
  return Array.from({ length: 5 }, (_, i) => ({
    timestamp: 1_700_000_000_000 + block * 1000 + i,
    timezone: i % 2 === 0 ? 'Z' : '+02:00',
    rawstring: `10.0.0.${i} - - [14/Nov/2023:22:13:${20 + i} +0000] "GET /item/${block}/${i} HTTP/1.1" 200 ${100 + i} "-" "curl/8" ✓`,
    fields: i === 2 ? { method: 'GET', statuscode: '200' } : { method: 'GET', statuscode: '200', url: `/item/${block}/${i}` },
    ingestTimestamp: 1_700_000_100_000,
    offset: block * 4096,
    index: i,
  }));
}

/**
 * Format 3's and 4's events: block 0 with enough parsed fields that its raw strings are stored as
 * templates over them, block 1 as in the older fixtures (raw strings whole, fields referring into them).
 */
function eventsV3(block: number): StoredEvent[] {
  if (block !== 0) return events(block);
  return events(0).map((e, i) => ({ ...e, fields: { ...e.fields, client: `10.0.0.${i}`, responsesize: String(100 + i), useragent: 'curl/8', date: `14/Nov/2023:22:13:${20 + i} +0000` } }));
}

function buildGolden(): Buffer {
  const parts: Buffer[] = [encodeSegmentHeader(META)];
  let pos = parts[0]!.length;
  const entries: BlockEntry[] = [];
  for (const b of [0, 1]) {
    const cols = emptyColumns();
    for (const e of eventsV3(b)) addEvent(cols, e);
    const bytes = encodeBlock(cols, lz4Codec);
    entries.push({ ...readBlockMeta(bytes, 0)!, pos });
    parts.push(bytes);
    pos += bytes.length;
  }
  parts.push(encodeFooter({ blocks: entries, ...summarize(entries), closedAt: 1_700_000_200_000 }));
  return Buffer.concat(parts);
}

function checkReadsBack(t: Test, buf: Buffer, file: string, want: (block: number) => StoredEvent[]): ParsedSegment {
  const seg = parseSegment(buf, file);
  t.same(seg.meta, META);
  t.same(seg.damage, []);
  t.equal(seg.blocks.length, 2);
  t.not(seg.footer, null);
  t.equal(seg.footer!.eventCount, 10);
  t.equal(seg.footer!.closedAt, 1_700_000_200_000);
  for (const [i, b] of seg.blocks.entries()) t.same(decodeBlockEvents(buf, b.pos, b, lz4Codec), want(i), `block ${i} events`);
  return seg;
}

const bodyOf = (buf: Buffer, b: BlockEntry): BlockBody => wholeBody(encodedBlockAt(buf, b.pos, b, lz4Codec));

t.test('golden segment v6 reads back exactly', async (t) => {
  if (process.env.UPDATE_GOLDEN === '1') await writeFile(FIXTURE, buildGolden());
  const buf = await readFile(FIXTURE);
  t.equal(SEGMENT_FORMAT_VERSION, 6);
  t.equal(buf.readUInt32LE(4), 6);
  const seg = checkReadsBack(t, buf, FIXTURE, eventsV3);
  t.ok(seg.blocks.every((b) => b.framed === true && b.headerLength === 84 + buf.readUInt32LE(b.pos + 64) && b.gramLength === 128), 'blocks of column frames with a head section and a gram filter');
  const dir = blockDirectory(buf.subarray(seg.blocks[0]!.pos, seg.blocks[0]!.pos + seg.blocks[0]!.headerLength), seg.blocks[0]!)!;
  t.strictSame(
    dir.columns.filter((c) => c.summary !== undefined).map((c) => `${c.name}:${c.summary!.kind}`),
    ['ts:minutes', 'method:dict', 'statuscode:dict', 'responsesize:ints', 'useragent:dict'],
    'block 0: summaries of the timestamps, the small dictionaries and the integer column',
  );
  t.strictSame(dir.columns.find((c) => c.name === 'statuscode')!.summary, { kind: 'dict', d: ['200'], counts: [5], absent: 0 });
  t.strictSame(dir.columns.find((c) => c.name === 'responsesize')!.summary, { kind: 'ints', n: 5, min: 100, max: 104, sum: 510 });
  t.strictSame(dir.columns[0]!.summary, { kind: 'minutes', first: 1_699_999_980_000, counts: [5] });
  const [b0, b1] = seg.blocks.map((b) => bodyOf(buf, b));
  t.equal(b0!.raw.e, 't', 'block 0: raw strings as templates over the fields');
  t.notOk(b0!.fields.some(([, c]) => c.e === 'x'), 'block 0: no field refers into the raw strings');
  t.strictSame(
    b0!.fields.map(([name, c]) => `${name}:${c.e}`),
    ['method:k', 'statuscode:k', 'url:u', 'client:4', 'responsesize:i', 'useragent:k', 'date:u'],
    'block 0: dictionaries, text, IPv4 and integer columns',
  );
  t.equal(b1!.raw.e, 'j', 'block 1: few fields, raw strings whole');
  t.ok(b1!.fields.some(([, c]) => c.e === 'x'), 'block 1: fields refer into the raw strings');
});

t.test('the encoder still produces the golden bytes', async (t) => {
  const buf = await readFile(FIXTURE);
  t.ok(buildGolden().equals(buf), 'byte-identical to the v6 fixture');
});

t.test('golden segments of earlier formats still read back', async (t) => {
  for (const file of OLD_FIXTURES) {
    const buf = await readFile(file);
    const v = buf.readUInt32LE(4);
    const seg = checkReadsBack(t, buf, file, v >= 3 ? eventsV3 : events);
    const hl = (b: { pos: number }): number => (v === 1 ? 64 : v === 5 ? 76 + buf.readUInt32LE(b.pos + 64) : 68);
    const gl = v === 1 ? 0 : 128;
    t.ok(seg.blocks.every((b) => b.headerLength === hl(b) && b.gramLength === gl), `v${v}: block headers of the format, gram filter ${gl} bytes`);
    const info = await readSegmentInfo(file, createLogger('error'), Date.now());
    t.strictSame(
      info.blocks.map((b) => [b.pos, b.headerLength, b.gramLength]),
      seg.blocks.map((b) => [b.pos, hl(b), gl]),
      `v${v}: the catalog reads the footer with the layout of its blocks`,
    );
  }
});

t.test('queries over every format: every format answers; an absent whole word is skipped by the bloom filter', async (t) => {
  const scan = async (file: string, text: string) => {
    const info = await readSegmentInfo(file, createLogger('error'), Date.now());
    const ctx = { start: 0, end: 2_000_000_000_000, timeZoneOffsetMinutes: 0, now: 2_000_000_000_000, live: false };
    return runScanTask({
      spec: { text, args: {}, ctx, limits: DEFAULT_LIMITS },
      repoName: 'golden',
      units: [{ kind: 'seg', path: file, partition: 3, tags: META.tags, blocks: info.blocks }],
      deadline: Date.now() + 60_000,
    });
  };
  for (const file of [FIXTURE, ...OLD_FIXTURES]) {
    const v = `v${(await readFile(file)).readUInt32LE(4)}`;
    t.match(await scan(file, 'item | count()'), { blocksRead: 2, blocksSkipped: 0, matched: 10 }, `${v}: a word in every event`);
    t.match(await scan(file, 'ITEM/1 | count()'), { matched: 5 }, `${v}: a word of the search text in every block, but the phrase in one: found`);
    t.match(await scan(file, '"10.0.0.3 - - [14/Nov/2023:22:13:23 +0000] \\"GET /item/0/3" | count()'), { matched: 1 }, `${v}: raw text across fields and gaps`);
    t.match(await scan(file, 'method=GET url=*/0/* | count()'), { matched: 4 }, `${v}: fields`);
    // Free text searches every stored field (query-functions.md §2). Up to format 3 the gram filter
    // holds only @rawstring's grams: a bare word reads the blocks. From format 4 it holds every
    // field value's grams too: an absent bare word skips them. A word bounded on both sides inside
    // the search text is a whole token, which the bloom filter rules out in every format.
    const fieldGrams = v === 'v4' || v === 'v5' || v === 'v6';
    t.match(await scan(file, 'zq7xk2vblm | count()'), fieldGrams ? { blocksRead: 0, blocksSkipped: 2, matched: 0 } : { blocksRead: 2, blocksSkipped: 0, matched: 0 }, `${v}: an absent bare word ${fieldGrams ? 'skips every block' : 'reads the blocks'} and finds nothing`);
    t.match(await scan(file, '"GET zq7xk2vblm item" | count()'), { blocksRead: 0, blocksSkipped: 2, matched: 0 }, `${v}: an absent whole word skips every block`);
  }
});

t.test('blocks of an older format copied into a format 4 segment (a redaction rewrite) keep their gram filters unused for free text', async (t) => {
  // The v3 fixture relabelled as version 4 (the header's checksum covers its metadata only): its
  // blocks are unflagged, so a free-text word must not be ruled out by their @rawstring-only grams.
  const buf = Buffer.from(await readFile(fixture(3)));
  buf.writeUInt32LE(4, 4);
  const dir = await mkdtemp(join(tmpdir(), 'golden-relabel-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'relabelled.seg');
  await writeFile(file, buf);
  const info = await readSegmentInfo(file, createLogger('error'), Date.now());
  t.ok(info.blocks.every((b) => b.fieldGrams !== true), 'no block claims field grams');
  const ctx = { start: 0, end: 2_000_000_000_000, timeZoneOffsetMinutes: 0, now: 2_000_000_000_000, live: false };
  const r = runScanTask({ spec: { text: 'zq7xk2vblm | count()', args: {}, ctx, limits: DEFAULT_LIMITS }, repoName: 'golden', units: [{ kind: 'seg', path: file, partition: 3, tags: META.tags, blocks: info.blocks }], deadline: Date.now() + 60_000 });
  t.match(r, { blocksRead: 2, blocksSkipped: 0, matched: 0 }, 'the blocks are read');
});
