/**
 * Small column frames kept by a query thread between tasks, checked and decompressed (issue 19):
 * a block's dictionary codes, integer and IPv4 columns (a few KB each) are what field filters and
 * aggregates read, and for such a frame the read, its checksum and the LZ4 call cost more than
 * the work on its rows (~8 µs a frame against ~2 µs of rows; profile of `method=POST |
 * groupBy(statuscode)` over 1 M access-log events, docs/benchmarks.md, 2026-11-28). A query asked
 * again, or another on the same fields, takes them from here; a text search too (a block's
 * dictionaries and small text columns: LZ4 was 16-21 % of every text scan, docs/benchmarks.md,
 * 2026-11-29 lz4dict). Large frames (raw strings, long text columns) are never kept: text search
 * decompresses them anew. Beside a kept frame, the columns decoded from it that are views of its
 * bytes (no msgpack decode per block and query), and, for reads of single columns, a summarised
 * dictionary's codes copied out of a frame too large to keep (docs/benchmarks.md, 2026-11-29 nest19).
 *
 * Keyed like the block heads (block-heads.ts): segment path, block position and its stored length
 * (a block of a segment file never changes once written), then the frame's number; bounded by the
 * frames' bytes, the least recently used blocks let go first (block-cache.ts).
 */
import type { FrameKeeper } from '../segments/frames.js';
import { BlockCache, type CacheEntry } from './block-cache.js';

/** Frames larger than this (decompressed) are not kept. */
export const KEPT_FRAME_MAX = 16 * 1024;

/** Per query thread. */
export const KEPT_FRAMES_BYTES = 16 * 1024 * 1024;

/** What an entry costs besides its frames (its key, array and object), for the bound. */
const ENTRY_COST = 200;

/** What a decoded column costs (its object and views of its frame's bytes), for the bound. */
const COLUMN_COST = 160;

/** A block's kept frames by number, its columns decoded from them by column number, and its frames' stored length. */
interface BlockEntry extends CacheEntry {
  frames: (Buffer | undefined)[];
  columns: unknown[];
  stored: number;
}

export class KeptFrames {
  private readonly cache: BlockCache<BlockEntry>;
  private count = 0;

  constructor(
    maxBytes = KEPT_FRAMES_BYTES,
    private readonly maxFrame = KEPT_FRAME_MAX,
  ) {
    this.cache = new BlockCache<BlockEntry>(maxBytes, (e) => {
      for (const f of e.frames) if (f !== undefined) this.count--;
    });
  }

  /** Bytes and frames held, for tests and benchmarks. */
  get size(): { bytes: number; frames: number } {
    return { bytes: this.cache.held, frames: this.count };
  }

  clear(): void {
    this.cache.clear();
  }

  /**
   * The kept frames of the block at `pos` of segment `path` (`stored`: its frames' stored length).
   * `copies`: a column read alone out of a frame too large to keep may be copied out and held
   * (FrameKeeper.copiesColumns; not for a text search, which reads every column of a block).
   */
  block(path: string, pos: number, stored: number, copies = false): FrameKeeper {
    let entry = this.cache.get(path, pos);
    if (entry === undefined || entry.stored !== stored) {
      // A block whose frames are all large holds none, but its entry still counts.
      entry = { frames: [], columns: [], bytes: ENTRY_COST, path, pos, stored, used: 0 };
      this.cache.add(entry);
    }
    const e = entry;
    return {
      get: (f) => e.frames[f],
      put: (f, plain) => {
        if (plain.length > this.maxFrame || e.frames[f] !== undefined || !this.cache.holds(e)) return;
        // A copy unless the buffer is the frame's own (a slice would keep the whole read alive).
        const own = plain.byteOffset === 0 && plain.buffer.byteLength === plain.length ? plain : Buffer.from(plain);
        e.frames[f] = own;
        this.count++;
        this.cache.grew(e, own.length);
      },
      column: (k) => e.columns[k],
      // A view of a frame held here (kept as long as it is), or of bytes of its own, charged.
      keepColumn: (k, value, own) => {
        if (e.columns[k] !== undefined || !this.cache.holds(e)) return;
        e.columns[k] = value;
        this.cache.grew(e, COLUMN_COST + own);
      },
      copiesColumns: copies,
    };
  }
}
