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
 * used let go first (block-cache.ts). Frames are kept apart, and only small ones (kept-frames.ts).
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
  /** The bloom filter and the gram filter back to back, checked; null until a query needed them. */
  filters: Buffer | null;
  /** The bloom filter and the gram filter, views of `filters` made once (not per block a query checks). */
  bloom: Buffer | null;
  grams: Buffer | null;
  /** The filters' checksum (header bytes 68-71). */
  filtersCrc: number;
  /** What the entry holds, estimated (header bytes, directory objects, filters). */
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

/** Bytes per directory column (its object and name) and per frame entry, for the estimate. */
const COLUMN_COST = 120;
const FRAME_COST = 80;
const ENTRY_COST = 400;

/**
 * Per query thread: ~2,800 access-log blocks with their bloom and gram filters (~12 KB each), or
 * ~8,000 without. At 16 MiB the 1,600 blocks of 3 M access-log events did not fit once a rare
 * token asked for their filters, and a scan in block order evicts each head before its next use:
 * every query read every head again (docs/benchmarks.md, 2026-11-28).
 */
export const BLOCK_HEADS_BYTES = 32 * 1024 * 1024;

/** A kept head and where it is kept. */
interface Kept extends CacheEntry {
  head: BlockHead;
}

export class BlockHeads {
  private readonly cache: BlockCache<Kept>;

  constructor(maxBytes = BLOCK_HEADS_BYTES) {
    this.cache = new BlockCache<Kept>(maxBytes);
  }

  /** Bytes held (estimated) and entries, for tests and benchmarks. */
  get size(): { bytes: number; entries: number } {
    return { bytes: this.cache.held, entries: this.cache.entries };
  }

  clear(): void {
    this.cache.clear();
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
      if (!filters || got.filters !== null) return got;
      const f = readFilters(file(), b, got.filtersCrc);
      if (f === null) return null;
      got.filters = f;
      got.bloom = f.subarray(0, b.bloomLength);
      got.grams = f.subarray(b.bloomLength);
      got.bytes += f.length;
      this.cache.grew(kept!, f.length);
      return got;
    }
    if (kept !== undefined) this.cache.drop(kept);
    const head = readHead(file(), b, filters);
    if (head === null) return null;
    this.cache.add({ head, path, pos: b.pos, bytes: head.bytes, used: 0 });
    return head;
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
  const bytes = ENTRY_COST + b.headerLength + dir.columns.length * COLUMN_COST + dir.frames.length * FRAME_COST + (f?.length ?? 0);
  return { meta, dir, filters: f, bloom: f?.subarray(0, b.bloomLength) ?? null, grams: f?.subarray(b.bloomLength) ?? null, filtersCrc: top.readUInt32LE(68), bytes };
}

function readFilters(fd: number, b: HeadRef, crc: number): Buffer | null {
  const f = Buffer.allocUnsafe(b.bloomLength + b.gramLength);
  if (readSync(fd, f, 0, f.length, b.pos + b.headerLength) !== f.length) return null;
  return crc32c(f) === crc ? f : null;
}
