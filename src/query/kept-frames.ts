/**
 * Small column frames kept by a query thread between tasks, checked and decompressed (issue 19):
 * a block's dictionary codes, integer and IPv4 columns (a few KB each) are what field filters and
 * aggregates read, and for such a frame the read, its checksum and the LZ4 call cost more than
 * the work on its rows (~8 µs a frame against ~2 µs of rows; profile of `method=POST |
 * groupBy(statuscode)` over 1 M access-log events, docs/benchmarks.md, 2026-11-28). A query asked
 * again, or another on the same fields, takes them from here. Large frames (raw strings, text
 * columns) are never kept: text search reads them anew.
 *
 * Keyed like the block heads (block-heads.ts): segment path, block position and its stored length
 * (a block of a segment file never changes once written), then the frame's number. Bounded by the
 * frames' bytes; the least recently used go first.
 */
import type { FrameKeeper } from '../segments/frames.js';

/** Frames larger than this (decompressed) are not kept. */
export const KEPT_FRAME_MAX = 16 * 1024;

/** Per query thread. */
export const KEPT_FRAMES_BYTES = 16 * 1024 * 1024;


/** What an entry costs besides its frames (its key, array and object), for the bound. */
const ENTRY_COST = 200;

/** A block's kept frames by number, their bytes, and where the entry is kept. */
interface BlockEntry {
  frames: (Buffer | undefined)[];
  bytes: number;
  path: string;
  pos: number;
  stored: number;
}

export class KeptFrames {
  /** Segment path -> block position -> entry (the path string the same object block after block: its hash made once). */
  private readonly map = new Map<string, Map<number, BlockEntry>>();
  /** Every entry, least recently used first. */
  private readonly order = new Set<BlockEntry>();
  private held = 0;
  private count = 0;

  constructor(
    private readonly maxBytes = KEPT_FRAMES_BYTES,
    private readonly maxFrame = KEPT_FRAME_MAX,
  ) {}

  /** Bytes and frames held, for tests and benchmarks. */
  get size(): { bytes: number; frames: number } {
    return { bytes: this.held, frames: this.count };
  }

  clear(): void {
    this.map.clear();
    this.order.clear();
    this.held = 0;
    this.count = 0;
  }

  /** The kept frames of the block at `pos` of segment `path` (`stored`: its frames' stored length). */
  block(path: string, pos: number, stored: number): FrameKeeper {
    let inFile = this.map.get(path);
    if (inFile === undefined) this.map.set(path, (inFile = new Map()));
    let entry = inFile.get(pos);
    if (entry !== undefined && entry.stored !== stored) {
      this.drop(entry);
      entry = undefined;
    }
    // Most recently used: to the end of the order.
    if (entry !== undefined) this.order.delete(entry);
    else {
      // A block whose frames are all large holds none, but its entry still counts.
      entry = { frames: [], bytes: ENTRY_COST, path, pos, stored };
      inFile.set(pos, entry);
      this.held += ENTRY_COST;
    }
    this.order.add(entry);
    this.evict(entry);
    const e = entry;
    return {
      get: (f) => e.frames[f],
      put: (f, plain) => {
        if (plain.length > this.maxFrame || plain.length > this.maxBytes || e.frames[f] !== undefined || !this.order.has(e)) return;
        // A copy unless the buffer is the frame's own (a slice would keep the whole read alive).
        const own = plain.byteOffset === 0 && plain.buffer.byteLength === plain.length ? plain : Buffer.from(plain);
        e.frames[f] = own;
        e.bytes += own.length;
        this.held += own.length;
        this.count++;
        this.evict(e);
      },
    };
  }

  /** Lets the least recently used blocks' frames go while over the bound (never those of `keep`). */
  private evict(keep: BlockEntry): void {
    for (const oldest of this.order) {
      if (this.held <= this.maxBytes) return;
      if (oldest !== keep) this.drop(oldest);
    }
  }

  private drop(e: BlockEntry): void {
    this.order.delete(e);
    const inFile = this.map.get(e.path);
    inFile?.delete(e.pos);
    if (inFile?.size === 0) this.map.delete(e.path);
    this.held -= e.bytes;
    for (const f of e.frames) if (f !== undefined) this.count--;
  }
}
