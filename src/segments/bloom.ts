/**
 * The per-block bloom filter of tokens: lower-cased alphanumeric runs of the raw text and of field
 * values (at most 64 characters each), plus every whole lower-cased field value. Queries use it to
 * skip blocks that cannot contain a search term. k = 4 probes from two 32-bit hashes (double
 * hashing); about 10 bits per distinct token, so a false-positive rate near 1%, capped at 2 Mbit
 * (256 KiB) per block.
 *
 * Hot path (it ran at a quarter of the digest workers' time when it lower-cased, sliced and kept
 * token strings in a Set): tokens are hashed while the characters are scanned, and distinct tokens
 * are kept as hash pairs in an integer open-addressing table. No string is created per token.
 */

const K = 4;
const MIN_BITS = 1024;
const MAX_BITS = 1 << 21;
const MAX_TOKEN = 64;
const SEED1 = 0x811c9dc5;
const SEED2 = 0x9747b28c;

const nonAsciiLower = new Map<number, number>();

/** An ASCII unit lower-cased. */
function lowerAscii(c: number): number {
  return c >= 65 && c <= 90 ? c + 32 : c;
}

/** A non-ASCII unit lower-cased by toLowerCase when that gives one unit; else the unit itself. */
function lowerWide(c: number): number {
  const s = String.fromCharCode(c).toLowerCase();
  return s.length === 1 ? s.charCodeAt(0) : c;
}

/** Lower-cases one UTF-16 code unit (ASCII inline; others via a memoized toLowerCase). */
export function lower(c: number): number {
  if (c < 0x80) return lowerAscii(c);
  let l = nonAsciiLower.get(c);
  if (l === undefined) nonAsciiLower.set(c, (l = lowerWide(c)));
  return l;
}

/** `lower` of every UTF-16 unit, for the native block builder (~40 ms: built once, when first needed). */
export function lowerTable(): Uint16Array {
  const table = new Uint16Array(65536);
  for (let c = 0; c < 65536; c++) table[c] = c < 0x80 ? lowerAscii(c) : lowerWide(c);
  return table;
}

/** Token characters: ASCII alphanumerics and every non-ASCII unit. */
export function isWord(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c >= 0x80;
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Calls `each` for every lower-cased token of `text` (at most 64 chars per token). */
export function forEachToken(text: string, each: (token: string) => void): void {
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 32;
    if (isWord(c)) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      let tok = '';
      for (let j = start; j < Math.min(i, start + MAX_TOKEN); j++) tok += String.fromCharCode(lower(text.charCodeAt(j)));
      each(tok);
      start = -1;
    }
  }
}

/** Both hashes of the lower-cased `s[from, to)`. */
function hashRange(s: string, from: number, to: number): [number, number] {
  let a = SEED1;
  let b = SEED2;
  for (let i = from; i < to; i++) {
    const c = lower(s.charCodeAt(i));
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193);
  }
  return [fmix(a), (fmix(b) | 1) >>> 0];
}

export class BloomBuilder {
  /** Open-addressing table of distinct (h1, h2) pairs; h2 is odd, so 0 marks an empty slot. */
  private h1 = new Uint32Array(1024);
  private h2 = new Uint32Array(1024);
  private size = 0;

  private insert(a: number, b: number): void {
    let mask = this.h1.length - 1;
    if ((this.size + 1) * 2 > this.h1.length) {
      this.grow();
      mask = this.h1.length - 1;
    }
    let i = a & mask;
    for (;;) {
      const cur = this.h2[i]!;
      if (cur === 0) {
        this.h1[i] = a;
        this.h2[i] = b;
        this.size++;
        return;
      }
      if (cur === b && this.h1[i] === a) return;
      i = (i + 1) & mask;
    }
  }

  private grow(): void {
    const o1 = this.h1;
    const o2 = this.h2;
    this.h1 = new Uint32Array(o1.length * 2);
    this.h2 = new Uint32Array(o2.length * 2);
    this.size = 0;
    for (let i = 0; i < o1.length; i++) if (o2[i] !== 0) this.insert(o1[i]!, o2[i]!);
  }

  addText(text: string): void {
    let start = -1;
    let a = SEED1;
    let b = SEED2;
    const n = text.length;
    for (let i = 0; i <= n; i++) {
      const c = i < n ? text.charCodeAt(i) : 32;
      if (isWord(c)) {
        if (start < 0) {
          start = i;
          a = SEED1;
          b = SEED2;
        }
        if (i - start < MAX_TOKEN) {
          const l = lower(c);
          a = Math.imul(a ^ l, 0x01000193);
          b = Math.imul(b ^ l, 0x01000193);
        }
      } else if (start >= 0) {
        this.insert(fmix(a), (fmix(b) | 1) >>> 0);
        start = -1;
      }
    }
  }

  addValue(value: string): void {
    const [a, b] = hashRange(value, 0, value.length);
    this.insert(a, b);
    this.addText(value);
  }

  build(): Buffer {
    let bits = MIN_BITS;
    while (bits < this.size * 10 && bits < MAX_BITS) bits *= 2;
    const out = Buffer.alloc(bits / 8);
    for (let s = 0; s < this.h1.length; s++) {
      const h2 = this.h2[s]!;
      if (h2 === 0) continue;
      const h1 = this.h1[s]!;
      for (let i = 0; i < K; i++) {
        const bit = (h1 + Math.imul(i, h2)) & (bits - 1);
        out[bit >>> 3]! |= 1 << (bit & 7);
      }
    }
    return out;
  }
}

/** The two hashes a token (or whole value) is probed with, computed once per query (query/filter-packs.ts). */
export function tokenHashes(token: string): [number, number] {
  return hashRange(token, 0, token.length);
}

/** False means the token (or whole value) is certainly not in the block. */
export function bloomMayContain(bloom: Buffer, token: string): boolean {
  const bits = bloom.length * 8;
  if (bits === 0) return true;
  const [h1, h2] = hashRange(token, 0, token.length);
  for (let i = 0; i < K; i++) {
    const bit = (h1 + Math.imul(i, h2)) & (bits - 1);
    if ((bloom[bit >>> 3]! & (1 << (bit & 7))) === 0) return false;
  }
  return true;
}
