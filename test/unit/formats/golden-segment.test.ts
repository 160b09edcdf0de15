/**
 * The golden segments. Format 2 (today's): the fixture must keep reading back to exactly these
 * events, and today's encoder must still produce it byte for byte (a difference means the format
 * changed: bump SEGMENT_FORMAT_VERSION and add a new fixture, keeping the old ones readable).
 * Regenerate deliberately with UPDATE_GOLDEN=1. Format 1 (no gram filter) was written by earlier
 * builds: it must still read back, through the catalog and through queries.
 */
import t, { type Test } from 'tap';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { addEvent, decodeBlockEvents, emptyColumns, encodeBlock, readBlockMeta, type StoredEvent } from '../../../src/segments/block.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { encodeFooter, encodeSegmentHeader, parseSegment, SEGMENT_FORMAT_VERSION, summarize, type BlockEntry, type ParsedSegment } from '../../../src/segments/segment-file.js';
import { readSegmentInfo } from '../../../src/segments/catalog.js';
import { createLogger } from '../../../src/lib/logger.js';
import { runScanTask } from '../../../src/query/scan.js';
import { DEFAULT_LIMITS } from '../../../src/query/runtime.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/segments/v2/golden.seg', import.meta.url));
const FIXTURE_V1 = fileURLToPath(new URL('../../fixtures/segments/v1/golden.seg', import.meta.url));

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

function buildGolden(): Buffer {
  const parts: Buffer[] = [encodeSegmentHeader(META)];
  let pos = parts[0]!.length;
  const entries: BlockEntry[] = [];
  for (const b of [0, 1]) {
    const cols = emptyColumns();
    for (const e of events(b)) addEvent(cols, e);
    const bytes = encodeBlock(cols, lz4Codec);
    entries.push({ ...readBlockMeta(bytes, 0)!, pos });
    parts.push(bytes);
    pos += bytes.length;
  }
  parts.push(encodeFooter({ blocks: entries, ...summarize(entries), closedAt: 1_700_000_200_000 }));
  return Buffer.concat(parts);
}

function checkReadsBack(t: Test, buf: Buffer, file: string): ParsedSegment {
  const seg = parseSegment(buf, file);
  t.same(seg.meta, META);
  t.same(seg.damage, []);
  t.equal(seg.blocks.length, 2);
  t.not(seg.footer, null);
  t.equal(seg.footer!.eventCount, 10);
  t.equal(seg.footer!.closedAt, 1_700_000_200_000);
  for (const [i, b] of seg.blocks.entries()) t.same(decodeBlockEvents(buf, b.pos, b, lz4Codec), events(i), `block ${i} events`);
  return seg;
}

t.test('golden segment v2 reads back exactly', async (t) => {
  if (process.env.UPDATE_GOLDEN === '1') await writeFile(FIXTURE, buildGolden());
  const buf = await readFile(FIXTURE);
  t.equal(SEGMENT_FORMAT_VERSION, 2);
  t.equal(buf.readUInt32LE(4), 2);
  const seg = checkReadsBack(t, buf, FIXTURE);
  t.ok(seg.blocks.every((b) => b.headerLength === 68 && b.gramLength === 128), 'format 2 blocks with a gram filter');
});

t.test('the encoder still produces the golden bytes', async (t) => {
  const buf = await readFile(FIXTURE);
  t.ok(buildGolden().equals(buf), 'byte-identical to the v2 fixture');
});

t.test('golden segment v1 (written by earlier builds) still reads back', async (t) => {
  const buf = await readFile(FIXTURE_V1);
  t.equal(buf.readUInt32LE(4), 1);
  const seg = checkReadsBack(t, buf, FIXTURE_V1);
  t.ok(seg.blocks.every((b) => b.headerLength === 64 && b.gramLength === 0), 'format 1 blocks: 64-byte header, no gram filter');
  const info = await readSegmentInfo(FIXTURE_V1, createLogger('error'), Date.now());
  t.strictSame(
    info.blocks.map((b) => [b.pos, b.headerLength, b.gramLength]),
    seg.blocks.map((b) => [b.pos, 64, 0]),
    'the catalog reads the footer of a format 1 segment with the layout of its blocks',
  );
});

t.test('queries over both formats: format 1 blocks are scanned, format 2 blocks skipped by the gram filter', async (t) => {
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
  for (const file of [FIXTURE, FIXTURE_V1]) {
    const v = file === FIXTURE ? 'v2' : 'v1';
    const hit = await scan(file, 'item | count()');
    t.match(hit, { blocksRead: 2, blocksSkipped: 0, matched: 10 }, `${v}: a word in every event`);
    const sub = await scan(file, 'ITEM/1 | count()');
    t.match(sub, { matched: 5 }, `${v}: a word of the search text in every block, but the phrase in one: found`);
  }
  t.match(await scan(FIXTURE, 'zq7xk2vblm | count()'), { blocksRead: 0, blocksSkipped: 2, matched: 0 }, 'v2: an absent word skips every block');
  t.match(await scan(FIXTURE_V1, 'zq7xk2vblm | count()'), { blocksRead: 2, blocksSkipped: 0, matched: 0 }, 'v1: nothing to skip with, every block read');
});
