/**
 * The actor of one digest partition: routes the events of each queue record to an open block per
 * datasource, seals blocks when they reach the target size or the flush interval, and writes sealed
 * blocks — one at a time, so a partition's order is kept — into the datasource's open segment,
 * which is closed after BLOCKS_PER_SEGMENT blocks or MAX_HOURS_SEGMENT_OPEN.
 *
 * Exactly once: an event's queue position (offset, index) is compared with the catalog's durable
 * high-water mark for its (partition, datasource); a replay skips what segments already hold.
 * The checkpoint is the lowest offset whose events are not all durable.
 */
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { groupSection, type RecordSummary } from '../events/index.js';
import type { BlockPart } from './block-parts.js';
import type { SegmentCatalog } from '../segments/catalog.js';
import { SegmentWriter } from '../segments/segment-writer.js';
import type { BlockEncoder } from './block-encoder.js';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ownsBuffer } from '../lib/bytes.js';
import { isNoSpaceError } from '../storage/index.js';

/** How long a block write refused for want of space waits before it is tried again. */
const NO_SPACE_RETRY_MS = 1000;

/**
 * A group's section as a block part: a view when the record is a buffer of its own and the section
 * is nearly all of it (one datasource per request, the common case: no copy on the HTTP thread);
 * otherwise a copy, so that a part never pins a whole replayed queue file or drags the other
 * groups of its record into every clone of it.
 */
function ownSection(payload: Buffer, summary: RecordSummary, group: number): Uint8Array {
  const section = groupSection(payload, summary, group);
  return ownsBuffer(payload) && section.byteLength * 10 >= payload.byteLength * 9 ? section : new Uint8Array(section);
}

export interface DigestSettings {
  segmentsDir: string;
  blockTargetBytes: number;
  flushBlockMs: number;
  blocksPerSegment: number;
  maxSegmentOpenMs: number;
}

interface OpenBlock {
  ds: string;
  repo: string;
  tags: Record<string, string>;
  /**
   * The block's events: each contributing record's section for this datasource (ownSection: a view
   * of a live record, a copy out of a replayed one, which is a view into a whole queue file).
   */
  parts: BlockPart[];
  bytes: number;
  firstOffset: number;
  /** The digester's `processedBytes` before the record at `firstOffset`. */
  firstBytes: number;
  openedAt: number;
}

interface OpenSegment {
  writer: SegmentWriter;
  openedAt: number;
  closing: boolean;
}

export interface DigesterDeps {
  catalog: SegmentCatalog;
  encoder: BlockEncoder;
  clock: Clock;
  logger: Logger;
  settings: DigestSettings;
  /** Called with ack-to-digest latency for each processed record (ms). */
  onLatency: (ms: number) => void;
  /** A block could not be made durable: the node must stop. */
  onFatal: (err: Error) => void;
  /** A cluster: recorded in each segment's header (the writer and its digest epoch). */
  origin?: { writer: number; epoch: number };
}

/** What `memory` answers when nothing is held (frozen: shared by every caller). */
const NOTHING_HELD: readonly never[] = Object.freeze([]);

/** A held block as a query reads it: its parts as they are now (the list is copied; it grows). */
function heldOf(b: OpenBlock): { ds: string; tags: Record<string, string>; parts: BlockPart[] } {
  return { ds: b.ds, tags: b.tags, parts: b.parts.slice() };
}

export class PartitionDigester {
  private readonly blocks = new Map<string, OpenBlock>();
  private readonly segments = new Map<string, OpenSegment>();
  private readonly sealed: OpenBlock[] = [];
  private inFlight: OpenBlock | null = null;
  /** Every file operation of this partition runs on this chain, one at a time, in order. */
  private chain: Promise<void> = Promise.resolve();
  private failed = false;
  /** Offset of the next record to process. */
  processedEnd: number;
  /** Queue bytes of every record processed so far (DigestQueue.recordBytes), a running sum. */
  private processedBytes = 0;
  openBytes = 0;

  constructor(
    readonly partition: number,
    startOffset: number,
    private readonly deps: DigesterDeps,
  ) {
    this.processedEnd = startOffset;
  }

  /**
   * Takes one queue record by its summary: no event is decoded here. Events at or below the
   * catalog's durable high-water mark for their (partition, datasource) are left out. `bytes`: what
   * the record takes in the queue (DigestQueue.recordBytes; by default its offset span, as offsets
   * are byte positions in the embedded queue).
   */
  process(offset: number, nextOffset: number, summary: RecordSummary, payload: Buffer, bytes = nextOffset - offset): void {
    if (offset < this.processedEnd) return; // already seen (live feed racing a replay)
    const { catalog, clock } = this.deps;
    let base = 0;
    summary.groups.forEach((g, group) => {
      const first = base;
      base += g.n;
      if (g.n === 0) return;
      const hw = catalog.highWater(this.partition, g.ds);
      let skip = 0;
      if (hw !== null && offset <= hw.offset) skip = offset < hw.offset ? g.n : Math.max(0, Math.min(g.n, hw.index - first + 1));
      if (skip >= g.n) return;
      let block = this.blocks.get(g.ds);
      if (block === undefined) {
        block = { ds: g.ds, repo: summary.repo, tags: g.tags, parts: [], bytes: 0, firstOffset: offset, firstBytes: this.processedBytes, openedAt: clock.monotonic() };
        this.blocks.set(g.ds, block);
      }
      block.parts.push({ events: ownSection(payload, summary, group), offset, base: first, skip, at: summary.at });
      const bytes = Math.ceil((g.b * (g.n - skip)) / g.n);
      block.bytes += bytes;
      this.openBytes += bytes;
      if (block.bytes >= this.deps.settings.blockTargetBytes) this.seal(block);
    });
    this.processedEnd = nextOffset;
    this.processedBytes += bytes;
    this.deps.onLatency(Math.max(0, clock.now() - summary.at));
  }

  private seal(block: OpenBlock): void {
    this.blocks.delete(block.ds);
    this.openBytes -= block.bytes;
    this.sealed.push(block);
    this.enqueue(() => this.writeNextSealed());
  }

  /**
   * Writes the oldest sealed block. A disk without room for it is not fatal (issue 24): the segment
   * was cut back, the block goes back to the front, and the write is tried again a second later;
   * meanwhile the events stay in the queue (the checkpoint holds) and the sealed backlog's bound
   * makes ingest answer 503.
   */
  private async writeNextSealed(): Promise<void> {
    const next = this.sealed.shift();
    if (next === undefined) return;
    this.inFlight = next;
    try {
      await this.write(next);
    } catch (err) {
      if (!isNoSpaceError(err)) throw err;
      this.sealed.unshift(next);
      this.inFlight = null;
      this.noSpace(err);
      await new Promise((r) => setTimeout(r, NO_SPACE_RETRY_MS));
      this.enqueue(() => this.writeNextSealed());
      return;
    }
    this.inFlight = null;
    this.spaceLogged = false;
  }

  private spaceLogged = false;

  private noSpace(err: unknown): void {
    if (this.spaceLogged) return;
    this.spaceLogged = true;
    this.deps.logger.error('digest: disk full; segment writes wait for space (retried every second)', { partition: this.partition, error: (err as Error).message });
  }

  private enqueue(task: () => Promise<void>): void {
    this.chain = this.chain.then(async () => {
      if (this.failed) return;
      try {
        await task();
      } catch (err) {
        this.failed = true;
        this.deps.onFatal(err as Error);
      }
    });
  }

  /**
   * Seals the open block holding the checkpoint back (the oldest), so a quiet datasource cannot pin
   * the queue for a whole flush interval; returns its size, 0 if none.
   */
  sealOldest(): number {
    let oldest: OpenBlock | undefined;
    for (const b of this.blocks.values()) if (oldest === undefined || b.firstOffset < oldest.firstOffset) oldest = b;
    if (oldest === undefined) return 0;
    this.seal(oldest);
    return oldest.bytes;
  }

  /** Seals the largest open block (memory pressure); returns its size, 0 if none. */
  sealLargest(): number {
    let largest: OpenBlock | undefined;
    for (const b of this.blocks.values()) if (largest === undefined || b.bytes > largest.bytes) largest = b;
    if (largest === undefined) return 0;
    this.seal(largest);
    return largest.bytes;
  }

  private async write(block: OpenBlock): Promise<void> {
    const { encoder, catalog, clock, settings } = this.deps;
    const encoded = await encoder.encode(block.parts);
    let seg = this.segments.get(block.ds);
    if (seg === undefined) {
      const id = `${clock.now().toString(36)}-p${this.partition}-${randomBytes(6).toString('hex')}`;
      const writer = await SegmentWriter.create(join(settings.segmentsDir, block.repo, block.ds), {
        id,
        repo: block.repo,
        ds: block.ds,
        tags: block.tags,
        partition: this.partition,
        createdAt: clock.now(),
        ...(this.deps.origin ?? {}),
      });
      seg = { writer, openedAt: clock.monotonic(), closing: false };
      this.segments.set(block.ds, seg);
    }
    await seg.writer.append(encoded.bytes, encoded.meta);
    catalog.put({ path: seg.writer.path, meta: seg.writer.meta, blocks: seg.writer.blocks, closed: false, bytes: seg.writer.bytes });
    if (seg.writer.blockCount >= settings.blocksPerSegment) await this.closeSegment(block.ds, seg);
  }

  private async closeSegment(ds: string, seg: OpenSegment): Promise<void> {
    if (this.segments.get(ds) !== seg) return; // closed already
    this.segments.delete(ds);
    await seg.writer.close(this.deps.clock.now());
    this.deps.catalog.put({ path: seg.writer.path, meta: seg.writer.meta, blocks: seg.writer.blocks, closed: true, bytes: seg.writer.bytes });
  }

  /** Seals blocks past the flush interval and closes segments past their maximum open time. */
  tick(): void {
    const now = this.deps.clock.monotonic();
    for (const b of [...this.blocks.values()]) if (now - b.openedAt >= this.deps.settings.flushBlockMs) this.seal(b);
    // A cluster closes segments at the flush interval too: only closed segments are copied to
    // other nodes, and the queue's copy of their events is kept until they are (replication.ts).
    const maxOpen = this.deps.origin === undefined ? this.deps.settings.maxSegmentOpenMs : Math.min(this.deps.settings.maxSegmentOpenMs, this.deps.settings.flushBlockMs);
    for (const [ds, seg] of this.segments) {
      if (!seg.closing && now - seg.openedAt >= maxOpen) {
        seg.closing = true;
        this.enqueue(async () => {
          try {
            await this.closeSegment(ds, seg);
          } catch (err) {
            if (!isNoSpaceError(err)) throw err;
            // Cut back; closed at a later tick once there is room.
            this.segments.set(ds, seg);
            seg.closing = false;
            this.noSpace(err);
          }
        });
      }
    }
  }

  /** The lowest queue offset whose events are not all in durable segments. */
  checkpoint(): number {
    let cp = this.processedEnd;
    for (const b of this.blocks.values()) cp = Math.min(cp, b.firstOffset);
    for (const b of this.sealed) cp = Math.min(cp, b.firstOffset);
    if (this.inFlight !== null) cp = Math.min(cp, this.inFlight.firstOffset);
    return cp;
  }

  /**
   * Queue bytes of the records from the checkpoint to `processedEnd`: read, and not all of their
   * events in durable segments yet (with `checkpoint()`, over the same blocks).
   */
  undurableBytes(): number {
    let from = this.processedBytes;
    for (const b of this.blocks.values()) from = Math.min(from, b.firstBytes);
    for (const b of this.sealed) from = Math.min(from, b.firstBytes);
    if (this.inFlight !== null) from = Math.min(from, this.inFlight.firstBytes);
    return this.processedBytes - from;
  }

  /** Bytes sealed but not yet durable. */
  pendingBytes(): number {
    let n = 0;
    for (const b of this.sealed) n += b.bytes;
    if (this.inFlight !== null) n += this.inFlight.bytes;
    return n;
  }

  /**
   * Gives the partition up without writing what is not durable yet (another node owns it now and
   * goes on from the marks it was given): open and sealed blocks are dropped, a write already under
   * way finishes (its block is voided by the caller if it lies past the marks), segments close.
   */
  async abandon(): Promise<void> {
    for (const b of this.blocks.values()) this.openBytes -= b.bytes;
    this.blocks.clear();
    this.sealed.length = 0;
    await this.chain;
    for (const [ds, seg] of [...this.segments]) this.enqueue(() => this.closeSegment(ds, seg));
    await this.chain;
  }

  /** Seals every open block, writes them, and closes every segment (clean shutdown). */
  async drain(): Promise<void> {
    for (const b of [...this.blocks.values()]) this.seal(b);
    await this.chain;
    for (const [ds, seg] of [...this.segments]) this.enqueue(() => this.closeSegment(ds, seg));
    await this.chain;
  }

  /**
   * The events of `repo` held in memory (open, sealed and in-flight blocks), as block parts per
   * datasource. Taken synchronously, so together with the catalog's blocks at the same moment it
   * covers every processed event; parts already in segments are left out by the caller's
   * high-water marks. The part arrays are copied (open blocks keep growing).
   */
  memory(repo: string): readonly { ds: string; tags: Record<string, string>; parts: BlockPart[] }[] {
    // Asked by every query for every partition: nothing allocated when nothing of `repo` is held
    // (the usual case between flushes; docs/benchmarks.md 2026-11-29 "req21").
    let out: { ds: string; tags: Record<string, string>; parts: BlockPart[] }[] | null = null;
    if (this.inFlight !== null && this.inFlight.repo === repo && this.inFlight.parts.length > 0) (out ??= []).push(heldOf(this.inFlight));
    for (const b of this.sealed) if (b.repo === repo && b.parts.length > 0) (out ??= []).push(heldOf(b));
    for (const b of this.blocks.values()) if (b.repo === repo && b.parts.length > 0) (out ??= []).push(heldOf(b));
    return out ?? NOTHING_HELD;
  }

  /** Resolves when every queued write is done. */
  settled(): Promise<void> {
    return this.chain;
  }
}
