/**
 * The per-block bloom filter of tokens: lower-cased alphanumeric runs of the raw text and of field
 * values, plus every whole field value. Queries use it to skip blocks that cannot contain a search
 * term. k = 4 probes from two 32-bit hashes (double hashing); about 10 bits per distinct token, so a
 * false-positive rate near 1%, capped at 2 Mbit (256 KiB) per block.
 */

const K = 4;
const MIN_BITS = 1024;
const MAX_BITS = 1 << 21;

function fnv1a(s: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // Final avalanche (murmur3 fmix32): FNV alone clusters short tokens.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Calls `each` for every lower-cased alphanumeric run of `text` (at most 64 chars per token). */
export function forEachToken(text: string, each: (token: string) => void): void {
  let start = -1;
  const lower = text.toLowerCase();
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 32;
    const word = (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c >= 0x80;
    if (word) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      each(lower.slice(start, Math.min(i, start + 64)));
      start = -1;
    }
  }
}

export class BloomBuilder {
  private readonly tokens = new Set<string>();

  addText(text: string): void {
    forEachToken(text, (t) => this.tokens.add(t));
  }

  addValue(value: string): void {
    this.tokens.add(value.toLowerCase());
    this.addText(value);
  }

  build(): Buffer {
    let bits = MIN_BITS;
    while (bits < this.tokens.size * 10 && bits < MAX_BITS) bits *= 2;
    const out = Buffer.alloc(bits / 8);
    for (const t of this.tokens) {
      const h1 = fnv1a(t, 0x811c9dc5);
      const h2 = fnv1a(t, 0x9747b28c) | 1;
      for (let i = 0; i < K; i++) {
        const bit = (h1 + Math.imul(i, h2)) & (bits - 1);
        out[bit >>> 3]! |= 1 << (bit & 7);
      }
    }
    return out;
  }
}

/** False means the token is certainly not in the block. */
export function bloomMayContain(bloom: Buffer, token: string): boolean {
  const bits = bloom.length * 8;
  if (bits === 0) return true;
  const t = token.toLowerCase();
  const h1 = fnv1a(t, 0x811c9dc5);
  const h2 = fnv1a(t, 0x9747b28c) | 1;
  for (let i = 0; i < K; i++) {
    const bit = (h1 + Math.imul(i, h2)) & (bits - 1);
    if ((bloom[bit >>> 3]! & (1 << (bit & 7))) === 0) return false;
  }
  return true;
}
