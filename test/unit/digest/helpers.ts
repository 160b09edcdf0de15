import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeRecord, type IngestEvent, type IngestRecord, type RecordGroup, type RecordSummary } from '../../../src/events/index.js';
import { decodeBlockEvents } from '../../../src/segments/block.js';
import { listSegmentFiles } from '../../../src/segments/catalog.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { parseSegment, type ParsedSegment } from '../../../src/segments/segment-file.js';
import { ManualClock } from '../../../src/lib/clock.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { InlineBlockEncoder, PartitionDigester, type DigestSettings } from '../../../src/digest/index.js';
import type { SegmentCatalog } from '../../../src/segments/catalog.js';

export async function tempDir(t: { teardown: (fn: () => unknown) => void }, prefix = 'logsvc-digest-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export const T0 = 1_700_000_000_000;

/** An event whose digest size (raw length + 48, no fields) is exactly `bytes`. */
export function ev(label: string, bytes = 148, ts = T0): IngestEvent {
  const raw = `${label} `.padEnd(bytes - 48, '.');
  return { timestamp: ts, timezone: 'Z', rawstring: raw, fields: {} };
}

export function group(ds: string, events: IngestEvent[], tags: Record<string, string> = { ds }): RecordGroup {
  return { ds, tags, events };
}

export function record(groups: RecordGroup[], repo = 'sandbox', at = T0): IngestRecord {
  return { repo, at, groups };
}

/** The (summary, payload) arguments PartitionDigester.process takes for a record. */
export function args(rec: IngestRecord): [RecordSummary, Buffer] {
  const { summary, payload } = encodeRecord(rec);
  return [summary, payload];
}

export interface StoredRow {
  file: string;
  ds: string;
  partition: number;
  offset: number;
  index: number;
  rawstring: string;
}

export interface SegmentView {
  path: string;
  seg: ParsedSegment;
  events: StoredRow[];
}

/** Every segment under `dir` with its decoded events (blocks as scanned). */
export async function readSegments(dir: string): Promise<SegmentView[]> {
  const out: SegmentView[] = [];
  for (const path of await listSegmentFiles(dir)) {
    const buf = await readFile(path);
    const seg = parseSegment(buf, path);
    const events: StoredRow[] = [];
    for (const b of seg.blocks) {
      for (const e of decodeBlockEvents(buf, b.pos, b, lz4Codec)) {
        events.push({ file: path, ds: seg.meta.ds, partition: seg.meta.partition, offset: e.offset, index: e.index, rawstring: e.rawstring });
      }
    }
    out.push({ path, seg, events });
  }
  return out;
}

export async function storedEvents(dir: string): Promise<StoredRow[]> {
  return (await readSegments(dir)).flatMap((s) => s.events);
}

/** "ds:offset:index" keys, sorted, with duplicates kept. */
export const keysOf = (rows: StoredRow[]): string[] => rows.map((r) => `${r.ds}:${r.offset}:${r.index}`).sort();

/** The expected keys for records (at the given offsets) as a PartitionDigester numbers them. */
export function expectedKeys(records: { offset: number; rec: IngestRecord }[]): string[] {
  const out: string[] = [];
  for (const { offset, rec } of records) {
    let index = 0;
    for (const g of rec.groups) for (const _ of g.events) out.push(`${g.ds}:${offset}:${index++}`);
  }
  return out.sort();
}

export function settings(segmentsDir: string, over: Partial<DigestSettings> = {}): DigestSettings {
  return { segmentsDir, blockTargetBytes: 2048, flushBlockMs: 5000, blocksPerSegment: 16, maxSegmentOpenMs: 3_600_000, ...over };
}

export interface DigesterRig {
  d: PartitionDigester;
  clock: ManualClock;
  fatal: Error[];
  latencies: number[];
}

export function digester(catalog: SegmentCatalog, s: DigestSettings, partition = 0, startOffset = 0, clock = new ManualClock(T0)): DigesterRig {
  const fatal: Error[] = [];
  const latencies: number[] = [];
  const d = new PartitionDigester(partition, startOffset, {
    catalog,
    encoder: new InlineBlockEncoder(),
    clock,
    logger: silentLogger,
    settings: s,
    onLatency: (ms) => latencies.push(ms),
    onFatal: (e) => fatal.push(e),
  });
  return { d, clock, fatal, latencies };
}
