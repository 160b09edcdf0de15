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

/** A block's kept frames by number, and their bytes. */
interface BlockEntry {
  frames: (Buffer | undefined)[];
  bytes: number;
}

export class KeptFrames {
  private readonly map = new Map<string, BlockEntry>();
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
    this.held = 0;
    this.count = 0;
  }

  /** The kept frames of the block at `pos` of segment `path` (`stored`: its frames' stored length). */
  block(path: string, pos: number, stored: number): FrameKeeper {
    const key = `${pos}\u0000${stored}\u0000${path}`;
    let entry = this.map.get(key);
    // Most recently used: to the end of the map's order (one lookup a block, not one a frame).
    if (entry !== undefined) this.map.delete(key);
    else {
      // A block whose frames are all large holds none, but its entry still counts.
      entry = { frames: [], bytes: ENTRY_COST };
      this.held += ENTRY_COST;
    }
    this.map.set(key, entry);
    this.evict(key);
    const e = entry;
    return {
      get: (f) => e.frames[f],
      put: (f, plain) => {
        if (plain.length > this.maxFrame || plain.length > this.maxBytes || e.frames[f] !== undefined) return;
        // A copy unless the buffer is the frame's own (a slice would keep the whole read alive).
        const own = plain.byteOffset === 0 && plain.buffer.byteLength === plain.length ? plain : Buffer.from(plain);
        e.frames[f] = own;
        e.bytes += own.length;
        this.held += own.length;
        this.count++;
        this.evict(key);
      },
    };
  }

  /** Lets the least recently used blocks' frames go while over the bound (never those of `keep`). */
  private evict(keep: string): void {
    for (const [k, oldest] of this.map) {
      if (this.held <= this.maxBytes) return;
      if (k === keep) continue;
      this.map.delete(k);
      this.held -= oldest.bytes;
      this.count -= oldest.frames.filter((x) => x !== undefined).length;
    }
  }
}
