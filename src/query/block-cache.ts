/**
 * What a query thread keeps per block between tasks (block-heads.ts, kept-frames.ts): entries by
 * segment path, then block position, bounded by their bytes, the least recently used let go first.
 *
 * The path string is the same object block after block (its hash computed once), where a key made
 * of position and path was a new string to hash for every block (a fifth of the scan of a rare
 * token over 539 cached heads, docs/benchmarks.md, 2026-11-28). A use stamps the entry; the order
 * is only sorted out when the bound is passed, and then down to EVICT_TO of it, so a scan of more
 * blocks than fit sorts once for many insertions.
 */

/** An entry: where it is kept, its bytes and when it was last used (set by the cache). */
export interface CacheEntry {
  readonly path: string;
  readonly pos: number;
  bytes: number;
  used: number;
}

/** Over the bound, the least recently used go until this share of it is held. */
const EVICT_TO = 0.9;

export class BlockCache<E extends CacheEntry> {
  private readonly map = new Map<string, Map<number, E>>();
  private clock = 0;
  /** Bytes and entries held. */
  held = 0;
  entries = 0;

  constructor(
    private readonly maxBytes: number,
    /** Told of each entry let go. */
    private readonly dropped: (e: E) => void = () => undefined,
  ) {}

  /** The entry of a block, stamped as used. */
  get(path: string, pos: number): E | undefined {
    const e = this.map.get(path)?.get(pos);
    if (e !== undefined) e.used = ++this.clock;
    return e;
  }

  /** True while `e` is held. */
  holds(e: E): boolean {
    return this.map.get(e.path)?.get(e.pos) === e;
  }

  /** Holds `e` (in place of what was held for its block), then keeps the bound. */
  add(e: E): void {
    const was = this.map.get(e.path)?.get(e.pos);
    if (was !== undefined) this.drop(was);
    let inFile = this.map.get(e.path);
    if (inFile === undefined) this.map.set(e.path, (inFile = new Map()));
    e.used = ++this.clock;
    inFile.set(e.pos, e);
    this.entries++;
    this.held += e.bytes;
    this.bound(e);
  }

  /** `e` holds `added` bytes more; then keeps the bound. */
  grew(e: E, added: number): void {
    e.bytes += added;
    this.held += added;
    this.bound(e);
  }

  drop(e: E): void {
    const inFile = this.map.get(e.path);
    if (inFile?.get(e.pos) !== e) return;
    inFile.delete(e.pos);
    if (inFile.size === 0) this.map.delete(e.path);
    this.entries--;
    this.held -= e.bytes;
    this.dropped(e);
  }

  clear(): void {
    for (const inFile of this.map.values()) for (const e of inFile.values()) this.dropped(e);
    this.map.clear();
    this.held = 0;
    this.entries = 0;
  }

  /** Over the bound: the least recently used go (never `newest`). */
  private bound(newest: E): void {
    if (this.held <= this.maxBytes) return;
    const all: E[] = [];
    for (const inFile of this.map.values()) for (const e of inFile.values()) if (e !== newest) all.push(e);
    all.sort((x, y) => x.used - y.used);
    const target = this.maxBytes * EVICT_TO;
    for (const e of all) {
      if (this.held <= target) break;
      this.drop(e);
    }
  }
}
