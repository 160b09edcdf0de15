/**
 * The golden segment of format version 1: the fixture must keep reading back to exactly these
 * events, and today's encoder must still produce it byte for byte (a difference means the format
 * changed: bump SEGMENT_FORMAT_VERSION and add a new fixture, keeping this one readable).
 * Regenerate deliberately with UPDATE_GOLDEN=1.
 */
import t from 'tap';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { addEvent, decodeBlockEvents, emptyColumns, encodeBlock, readBlockMeta, type StoredEvent } from '../../../src/segments/block.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { encodeFooter, encodeSegmentHeader, parseSegment, SEGMENT_FORMAT_VERSION, summarize, type BlockEntry } from '../../../src/segments/segment-file.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/segments/v1/golden.seg', import.meta.url));

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

t.test('golden segment v1 reads back exactly', async (t) => {
  if (process.env.UPDATE_GOLDEN === '1') await writeFile(FIXTURE, buildGolden());
  const buf = await readFile(FIXTURE);
  t.equal(SEGMENT_FORMAT_VERSION, 1);
  const seg = parseSegment(buf, FIXTURE);
  t.same(seg.meta, META);
  t.same(seg.damage, []);
  t.equal(seg.blocks.length, 2);
  t.not(seg.footer, null);
  t.equal(seg.footer!.eventCount, 10);
  t.equal(seg.footer!.closedAt, 1_700_000_200_000);
  for (const [i, b] of seg.blocks.entries()) t.same(decodeBlockEvents(buf, b.pos, b, lz4Codec), events(i), `block ${i} events`);
});

t.test('the encoder still produces the golden bytes', async (t) => {
  const buf = await readFile(FIXTURE);
  t.ok(buildGolden().equals(buf), 'byte-identical to the v1 fixture');
});
