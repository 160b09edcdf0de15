/**
 * The per-block gram filter: a bloom filter of every 4-gram inside the token runs of @rawstring
 * and (segment format 4) of every field value, folded exactly as the token bloom folds (`lower`, one UTF-16 unit at a time; token runs are
 * `isWord` units). Free text is a substring search, so a search word can match inside a longer
 * token ("xk2v" inside "zq7xk2vblm") and the whole-token bloom cannot rule a block out; every
 * 4-gram of the word must occur in some token run of a matching event, though, so a block whose
 * gram filter lacks one of them holds no match.
 *
 * Unlike the token bloom, grams are taken from whole runs of any length (a match may sit past the
 * 64th character of a run), from @rawstring and every stored field value (what free text searches).
 *
 * Building is on the digest's hot path, one probe pair per character of raw text: each gram's two
 * bit positions are set directly in a scratch bitmap of MAX_BITS (no set of distinct grams), then
 * the bitmap is folded in half (bit i | bit i + half, which is what indexing with one bit less
 * gives) while the folded filter stays at most FOLD_FILL full. With k = 2 probes that leaves a
 * false-positive rate per absent gram of at most FOLD_FILL² (25%); a ten-character word has seven
 * grams, so an unrelated block passes all of them about once in ten thousand (and a six-character
 * word, three grams, under once in sixty). A fuller filter would cost more reads than it saves
 * bytes: the filters are 2-12 % of a block.
 */
import { lower } from './bloom.js';

export const GRAM = 4;
const MIN_BITS = 1024;
/** 1 Mbit = 128 KiB: room for ~400k distinct grams per block before the filter saturates. */
const MAX_BITS = 1 << 20;
/** Fold while the folded filter would be at most this full. */
const FOLD_FILL = 0.5;
const P = 0x01000193;

/**
 * The first probe hash of one gram of folded units `a b c d`. Grams of Latin-1 units (nearly all of
 * them in logs) are keyed by the four bytes packed in an int, so the digest can roll the key along
 * the text; others by FNV-1a over the units. Then a murmur3 finaliser.
 */
function probe1(a: number, b: number, c: number, d: number): number {
  return (a | b | c | d) < 0x100 ? mix1(((a << 24) | (b << 16) | (c << 8) | d) >>> 0) : wideProbe1(a, b, c, d);
}

function wideProbe1(a: number, b: number, c: number, d: number): number {
  let h = Math.imul(0x811c9dc5 ^ a, P);
  h = Math.imul(h ^ b, P);
  h = Math.imul(h ^ c, P);
  return mix1(Math.imul(h ^ d, P) >>> 0);
}

function mix1(key: number): number {
  let h = key ^ (key >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The second probe hash, from the first. */
function probe2(h1: number): number {
  let h = Math.imul(h1 ^ (h1 >>> 15), 0x2c1b3c6d);
  h ^= h >>> 12;
  h = Math.imul(h, 0x297a2d39);
  return (h ^ (h >>> 15)) >>> 0;
}

const scratch = new Uint8Array(MAX_BITS / 8);

function popcount(bytes: Uint8Array): number {
  let n = 0;
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2);
  for (let i = 0; i < words.length; i++) {
    let v = words[i]!;
    v -= (v >>> 1) & 0x55555555;
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    n += (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
  }
  return n;
}

export class GramFilterBuilder {
  private used = false;

  constructor() {
    // One builder at a time per thread (blocks are encoded synchronously): the scratch bitmap is shared.
    scratch.fill(0);
  }

  /** Sets the grams of every token run of `text`. */
  addText(text: string): void {
    const mask = MAX_BITS - 1;
    const bits = scratch;
    // The last four folded units, and the same four as packed bytes while they are all Latin-1
    // (`wide` has a bit per unit of the window that is not).
    let a = 0;
    let b = 0;
    let c = 0;
    let packed = 0;
    let wide = 0;
    let run = 0;
    for (let i = 0; i < text.length; i++) {
      const u = text.charCodeAt(i);
      let d: number;
      if (u < 0x80) {
        if (u >= 97 ? u > 122 : u < 48 || (u > 57 && (u < 65 || u > 90))) {
          run = 0;
          continue;
        }
        d = u <= 90 && u >= 65 ? u + 32 : u;
      } else d = lower(u);
      packed = (packed << 8) | (d & 0xff);
      wide = ((wide << 1) | (d >= 0x100 ? 1 : 0)) & 0xf;
      if (++run >= GRAM) {
        const h1 = wide === 0 ? mix1(packed >>> 0) : wideProbe1(a, b, c, d);
        const x = h1 & mask;
        const y = probe2(h1) & mask;
        bits[x >>> 3]! |= 1 << (x & 7);
        bits[y >>> 3]! |= 1 << (y & 7);
        this.used = true;
      }
      a = b;
      b = c;
      c = d;
    }
  }

  /** The filter: MAX_BITS folded down to the smallest power of two that stays sparse enough. */
  build(): Buffer {
    if (!this.used) return Buffer.alloc(MIN_BITS / 8);
    let bytes = MAX_BITS / 8;
    let fill = popcount(scratch) / MAX_BITS;
    while (bytes * 8 > MIN_BITS && 1 - (1 - fill) * (1 - fill) <= FOLD_FILL) {
      const half = bytes >>> 1;
      for (let i = 0; i < half; i++) scratch[i]! |= scratch[i + half]!;
      bytes = half;
      fill = popcount(scratch.subarray(0, bytes)) / (bytes * 8);
    }
    return Buffer.from(scratch.subarray(0, bytes));
  }
}

/**
 * The probe hashes of every gram of `word` (a run of token units, already folded), two per gram;
 * computed once per query and tested against each block's filter. Empty for words shorter than a gram.
 */
export function gramProbes(word: string): Uint32Array {
  const n = Math.max(0, word.length - GRAM + 1);
  const out = new Uint32Array(n * 2);
  for (let i = 0; i < n; i++) {
    const h1 = probe1(word.charCodeAt(i), word.charCodeAt(i + 1), word.charCodeAt(i + 2), word.charCodeAt(i + 3));
    out[2 * i] = h1;
    out[2 * i + 1] = probe2(h1);
  }
  return out;
}

/** False means some gram of the probes is certainly absent from the block. An empty filter (a v1 block) cannot rule anything out. */
export function gramFilterMayContain(filter: Uint8Array, probes: Uint32Array): boolean {
  const bits = filter.length * 8;
  if (bits === 0) return true;
  const mask = bits - 1;
  for (let i = 0; i < probes.length; i++) {
    const x = probes[i]! & mask;
    if ((filter[x >>> 3]! & (1 << (x & 7))) === 0) return false;
  }
  return true;
}
