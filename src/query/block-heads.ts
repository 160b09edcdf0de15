/**
 * Format 5 block heads kept by a query thread between tasks (issue 19): a block's fixed header and
 * column directory, and its bloom and gram filters once a query has asked for them, each read and
 * checked against its checksum once, so later queries of the same block read only the frames they
 * need and parse nothing. Profiles of field filters and aggregates (docs/benchmarks.md,
 * 2026-11-28) had the header read, its checksum and the directory's parse at about a fifth of the
 * scan thread's time.
 *
 * Keyed by segment path and block position: a block of a segment file never changes once written
 * (a rewrite makes a new segment under a new id), and an entry is used only when the catalog's
 * lengths for the block match it. Bounded by an estimate of the bytes held, the least recently
 * used let go first (block-cache.ts). The filters have a bound of their own, apart from the heads':
 * a JSON block's filters are several times its head, and a scan that reads every block's filters
 * (free text over 1 M JSON events) would otherwise push out the heads that field filters and
 * aggregates answer from. Frames are kept apart, and only small ones (kept-frames.ts).
 */
import { readSync } from 'node:fs';
import { blockDirectory, framedFiltersIntact, framedHeaderIntact, readBlockMeta, type BlockMeta } from '../segments/block.js';
import type { Directory } from '../segments/frames.js';
import { crc32c } from '../storage/index.js';
import { BlockCache, type CacheEntry } from './block-cache.js';

/** What a scan needs of a block before its frames. */
export interface BlockHead {
  meta: BlockMeta;
  dir: Directory;
  /** The bloom filter and the gram filter back to back, checked; null until a query needed them (or once let go). */
  filters: Buffer | null;
  /** The bloom filter and the gram filter, views of `filters` made once (not per block a query checks). */
  bloom: Buffer | null;
  grams: Buffer | null;
  /** The filters' checksum (header bytes 68-71). */
  filtersCrc: number;
  /** What the entry holds apart from its filters, estimated (header bytes, directory objects, summaries). */
  bytes: number;
}

/** The lengths the catalog gives a block: an entry is used only when they match. */
export interface HeadRef {
  pos: number;
  headerLength: number;
  bloomLength: number;
  gramLength: number;
  compressedLength: number;
}

/**
 * Bytes per directory column (its object and name), per frame entry, per column summary and per
 * number a summary holds (a dictionary entry, whose string is mostly shared between blocks:
 * segments/intern.ts, with its count; a minute's count), for the estimate. Measured on 1 M JSON
 * events' heads (72 columns, 40 dictionary summaries of 413 entries in all per block): 33 KB of
 * heap per head, 30 KB estimated.
 */
const COLUMN_COST = 120;
const FRAME_COST = 80;
const SUMMARY_COST = 120;
const VALUE_COST = 24;
const ENTRY_COST = 400;

/**
 * Per query thread, the heads without their filters: ~1,000 JSON blocks' (1 M events, ~30 KB each
 * with their summaries) or ~8,000 access-log blocks'. At 16 MiB the heads of 1 M JSON events (and
 * the 1,600 blocks of 3 M access-log events with their filters) did not fit, and a scan in block
 * order evicts each head before its next use: every query read every head again
 * (docs/benchmarks.md, 2026-11-28).
 */
export const BLOCK_HEADS_BYTES = 32 * 1024 * 1024;
/** Per query thread, the heads' filters: ~3,300 access-log blocks' (~6 M events) or ~1,000 JSON blocks' (1 M events). */
export const BLOCK_FILTERS_BYTES = 32 * 1024 * 1024;

/** A kept head and where it is kept. */
interface Kept extends CacheEntry {
  head: BlockHead;
}

export class BlockHeads {
  private readonly cache: BlockCache<Kept>;
  /** The heads whose filters are held, least recently used first. */
  private readonly filtered = new Set<BlockHead>();
  private filtersHeld = 0;

  constructor(
    maxBytes = BLOCK_HEADS_BYTES,
    private readonly maxFilterBytes = BLOCK_FILTERS_BYTES,
  ) {
    this.cache = new BlockCache<Kept>(maxBytes, (e) => this.dropFilters(e.head));
  }

  /** Bytes held (estimated) and entries, and the filters' bytes, for tests and benchmarks. */
  get size(): { bytes: number; entries: number; filterBytes: number } {
    return { bytes: this.cache.held, entries: this.cache.entries, filterBytes: this.filtersHeld };
  }

  clear(): void {
    this.cache.clear();
    this.filtered.clear();
    this.filtersHeld = 0;
  }

  /**
   * The head of block `b` of segment `path` (`file()` opens it, once, when a read is needed), with
   * its filters when `filters`; read and checked when not held (header, directory and filters in
   * one read). Null: the block is damaged (nothing is kept of it).
   */
  get(file: () => number, path: string, b: HeadRef, filters: boolean): BlockHead | null {
    const kept = this.cache.get(path, b.pos);
    const got = kept?.head;
    if (got !== undefined && got.meta.headerLength === b.headerLength && got.meta.compressedLength === b.compressedLength && got.meta.bloomLength === b.bloomLength && got.meta.gramLength === b.gramLength) {
      if (!filters) return got;
      if (got.filters !== null) {
        // Most recently used: to the end of the filters' order.
        this.filtered.delete(got);
        this.filtered.add(got);
        return got;
      }
      const f = readFilters(file(), b, got.filtersCrc);
      if (f === null) return null;
      this.keepFilters(got, f, b.bloomLength);
      return got;
    }
    if (kept !== undefined) this.cache.drop(kept);
    const head = readHead(file(), b, filters);
    if (head === null) return null;
    this.cache.add({ head, path, pos: b.pos, bytes: head.bytes, used: 0 });
    if (head.filters !== null) this.keepFilters(head, head.filters, b.bloomLength);
    return head;
  }

  /**
   * The filters of block `b` whose head is `head` (as `get` gave it): the ones held, else read and
   * checked but not kept here (a pack of a segment's filters keeps them: filter-packs.ts). Null: damaged.
   */
  filtersOf(file: () => number, b: HeadRef, head: BlockHead): Buffer | null {
    return head.filters ?? readFilters(file(), b, head.filtersCrc);
  }

  /** Holds `f` as `head`'s filters, then lets the least recently used filters go while over their bound (never the newest). */
  private keepFilters(head: BlockHead, f: Buffer, bloomLength: number): void {
    head.filters = f;
    head.bloom = f.subarray(0, bloomLength);
    head.grams = f.subarray(bloomLength);
    this.filtered.add(head);
    this.filtersHeld += f.length;
    while (this.filtersHeld > this.maxFilterBytes && this.filtered.size > 1) this.dropFilters(this.filtered.values().next().value!);
  }

  private dropFilters(head: BlockHead): void {
    if (head.filters === null) return;
    this.filtered.delete(head);
    this.filtersHeld -= head.filters.length;
    head.filters = null;
    head.bloom = null;
    head.grams = null;
  }
}

function readHead(fd: number, b: HeadRef, filters: boolean): BlockHead | null {
  const filterBytes = filters ? b.bloomLength + b.gramLength : 0;
  const buf = Buffer.allocUnsafe(b.headerLength + filterBytes);
  if (readSync(fd, buf, 0, buf.length, b.pos) !== buf.length) return null;
  const meta = readBlockMeta(buf, 0);
  const top = buf.subarray(0, b.headerLength);
  if (meta === null || meta.framed !== true || meta.headerLength !== b.headerLength || meta.compressedLength !== b.compressedLength || !framedHeaderIntact(top, meta)) return null;
  const dir = blockDirectory(top, meta);
  if (dir === null) return null;
  let f: Buffer | null = null;
  if (filters) {
    // A copy: the entry outlives this read buffer, which holds the header too.
    f = Buffer.from(buf.subarray(b.headerLength));
    if (!framedFiltersIntact(top, f)) return null;
  }
  let bytes = ENTRY_COST + b.headerLength + dir.columns.length * COLUMN_COST + dir.frames.length * FRAME_COST;
  for (const c of dir.columns) {
    const sum = c.summary;
    if (sum !== undefined) bytes += SUMMARY_COST + (sum.kind === 'dict' ? sum.d.length : sum.kind === 'minutes' ? sum.counts.length : 0) * VALUE_COST;
  }
  return { meta, dir, filters: f, bloom: f?.subarray(0, b.bloomLength) ?? null, grams: f?.subarray(b.bloomLength) ?? null, filtersCrc: top.readUInt32LE(68), bytes };
}

function readFilters(fd: number, b: HeadRef, crc: number): Buffer | null {
  const f = Buffer.allocUnsafe(b.bloomLength + b.gramLength);
  if (readSync(fd, f, 0, f.length, b.pos + b.headerLength) !== f.length) return null;
  return crc32c(f) === crc ? f : null;
}
