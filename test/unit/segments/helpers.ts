import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addEvent, emptyColumns, encodeBlock, readBlockMeta, type BlockColumns, type BlockMeta, type StoredEvent } from '../../../src/segments/block.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { SegmentWriter } from '../../../src/segments/segment-writer.js';
import type { SegmentMeta } from '../../../src/segments/segment-file.js';

export async function tempDir(t: { teardown: (fn: () => unknown) => void }, prefix = 'logsvc-seg-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** `n` events at queue offsets starting at `firstOffset` (one record per 3 events). */
export function makeEvents(n: number, firstOffset = 0, seed = 0): StoredEvent[] {
  const out: StoredEvent[] = [];
  for (let i = 0; i < n; i++) {
    const k = i + seed;
    const fields: Record<string, string> = { seq: String(k) };
    if (k % 2 === 0) fields['even'] = 'yes';
    if (k % 5 === 0) fields['five'] = `f${k}`;
    out.push({
      timestamp: 1_700_000_000_000 + ((k * 7919) % 10_000) * 1000,
      timezone: k % 3 === 0 ? 'Z' : '+01:00',
      rawstring: `event ${k} host=web${k % 4} msg="hello world" ü${k}`,
      fields,
      ingestTimestamp: 1_700_000_100_000 + k,
      offset: firstOffset + Math.floor(i / 3) * 100,
      index: i % 3,
    });
  }
  return out;
}

export function columnsOf(events: StoredEvent[]): BlockColumns {
  const c = emptyColumns();
  for (const e of events) addEvent(c, e);
  return c;
}

export function blockOf(events: StoredEvent[]): { bytes: Buffer; meta: BlockMeta } {
  const bytes = encodeBlock(columnsOf(events), lz4Codec);
  return { bytes, meta: readBlockMeta(bytes, 0)! };
}

export function segMeta(id: string, over: Partial<SegmentMeta> = {}): SegmentMeta {
  return { id, repo: 'sandbox', ds: 'dsA', tags: { host: 'web1', type: 'accesslog' }, partition: 3, createdAt: 1_700_000_000_000, ...over };
}

/** Writes a segment with SegmentWriter; `close` false leaves it open (and returns the writer). */
export async function writeSegment(dir: string, meta: SegmentMeta, blocks: StoredEvent[][], close: boolean, now = 1_700_000_500_000): Promise<SegmentWriter> {
  const w = await SegmentWriter.create(dir, meta);
  for (const evs of blocks) {
    const b = blockOf(evs);
    await w.append(b.bytes, b.meta);
  }
  if (close) await w.close(now);
  return w;
}
