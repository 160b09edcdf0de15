/**
 * The needle of a text search (issue 19): its folded or exact UTF-16 units with a KMP automaton,
 * so a match can be followed from one piece of text into the next (a template's gaps and values,
 * text-scan.ts) without joining them, and the forms a search of stored UTF-8 bytes takes
 * (byte-search.ts). Case folding is unit by unit (casefold.ts `foldUnit`, as the bloom folds), on
 * the fly: nothing is allocated per row.
 */
import { fold, foldUnit, foldedIncludes } from './casefold.js';
import { LogsvcError } from '../lib/errors.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** ASCII text as a pattern that matches it literally. */
function escapeAscii(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

/** Lower-case letters from the most to the least common in English text (and so, roughly, in logs). */
const LETTERS = 'etaoinsrhldcumfpgwybvkxjqz';

/** The case variants of the folded needle's least common letter (its first unit when it has none). */
function rarest(u: Uint16Array): number[] {
  let best = -1;
  for (const c of u) if (c >= 97 && c <= 122 && (best < 0 || LETTERS.indexOf(String.fromCharCode(c)) > LETTERS.indexOf(String.fromCharCode(best)))) best = c;
  return best < 0 ? [u[0]!] : [best, best - 32];
}

/** A needle with its KMP failure table, folded (case-insensitive) or exact. */
export class Needle {
  readonly u: Uint16Array;
  readonly m: number;
  /** fail[q]: the state after a mismatch in state q + 1 (the longest proper border of u[0..q]). */
  private readonly fail: Int32Array;
  /** 1 for the ASCII units among the needle's first m - 1 (the units a partial match can end with). */
  readonly endAscii: Uint8Array;
  /** For an ASCII unit c: the lengths k < m of the needle's prefixes that end in c, longest first. */
  private readonly prefixesEndingIn: (number[] | undefined)[] = [];
  /** 1 for the ASCII units among the needle's last m - 1 (the units a partial match can go on with). */
  readonly contAscii: Uint8Array;
  /** The needle inside one whole value (native, allocation-free for an ASCII folded needle or an exact one). */
  readonly inside: (s: string) => boolean;
  /** Every unit is ASCII. */
  readonly ascii: boolean;
  /**
   * How stored UTF-8 text is searched without decoding it (byte-search.ts), or null when it
   * cannot be: the needle's bytes (lower-case ASCII when folded), and when folded a
   * case-insensitive pattern over the bytes read as Latin-1. A folded needle must be ASCII: then
   * its matches in UTF-8 are exactly its matches in the folded text, as no other unit folds into
   * ASCII but the Kelvin sign (see `kelvin`); an exact one must be well-formed UTF-16.
   */
  readonly bytes: Buffer | null;
  readonly latin1: RegExp | null;
  /** Folded and holding `k`: text with a Kelvin sign (which folds to `k`) must be searched decoded. */
  readonly kelvin: boolean;
  /** For a folded byte search: the bytes of its least common letter (both cases), text without either of which cannot hold it. */
  readonly rare: readonly number[];

  constructor(
    text: string,
    readonly folded: boolean,
  ) {
    const m = text.length;
    if (m === 0) throw new LogsvcError('E_INTERNAL', 'an empty needle');
    this.m = m;
    const u = new Uint16Array(m);
    for (let i = 0; i < m; i++) u[i] = folded ? foldUnit(text.charCodeAt(i)) : text.charCodeAt(i);
    this.u = u;
    const fail = new Int32Array(m);
    let k = 0;
    for (let q = 1; q < m; q++) {
      while (k > 0 && u[q] !== u[k]) k = fail[k - 1]!;
      if (u[q] === u[k]) k++;
      fail[q] = k;
    }
    this.fail = fail;
    const endAscii = new Uint8Array(128);
    for (let k = 0; k < m - 1; k++) if (u[k]! < 128) endAscii[u[k]!] = 1;
    this.endAscii = endAscii;
    for (let k = m - 1; k >= 1; k--) if (u[k - 1]! < 128) (this.prefixesEndingIn[u[k - 1]!] ??= []).push(k);
    const contAscii = new Uint8Array(128);
    for (let k = 1; k < m; k++) if (u[k]! < 128) contAscii[u[k]!] = 1;
    this.contAscii = contAscii;
    this.ascii = u.every((c) => c < 0x80);
    if (!folded) this.inside = (s) => s.includes(text);
    else if (this.ascii) this.inside = foldedIncludes(text);
    else this.inside = (s) => this.run(s, 0, s.length, 0) === m;
    this.kelvin = folded && u.includes(107 /* k */);
    this.rare = this.ascii && folded ? rarest(u) : [];
    if (folded) {
      const f = fold(text);
      this.bytes = this.ascii ? Buffer.from(f, 'latin1') : null;
      this.latin1 = this.ascii ? new RegExp(escapeAscii(f), 'gi') : null;
    } else {
      this.bytes = LONE_SURROGATE.test(text) ? null : Buffer.from(text, 'utf8');
      this.latin1 = null;
    }
  }

  /** True when every unit of the (folded) needle passes `unit`. */
  only(unit: (c: number) => boolean): boolean {
    return this.u.every(unit);
  }

  /**
   * The state after reading ASCII bytes b[from, to) from state 0, for text known not to hold the
   * needle: the longest proper prefix of the needle that the bytes end with. Only the prefixes
   * whose last unit is the bytes' last are tried, longest first, each from its first unit (so a
   * row ending in a unit the needle has costs a compare or two, not an automaton run).
   */
  tailOfAscii(b: Uint8Array, from: number, to: number): number {
    if (to <= from) return 0;
    const { u, folded } = this;
    let last = b[to - 1]!;
    if (folded && last >= 65 && last <= 90) last += 32;
    const ks = this.prefixesEndingIn[last];
    if (ks === undefined) return 0;
    next: for (const k of ks) {
      const at = to - k;
      if (at < from) continue;
      for (let j = 0; j < k - 1; j++) {
        let c = b[at + j]!;
        if (folded && c >= 65 && c <= 90) c += 32;
        if (c !== u[j]) continue next;
      }
      return k;
    }
    return 0;
  }

  /**
   * A partial match (`state` > 0) followed into ASCII bytes b[from, to): `m` when it completes in
   * them (within their first m - 1), the state after them when they are shorter than that and it
   * is still going, else -1: it ended, and the state after the bytes is what it is from state 0
   * (for the caller to know from the value itself, as `through` does).
   */
  stepAscii(b: Uint8Array, from: number, to: number, state: number): number {
    const { u, fail, m, folded } = this;
    let q = state;
    const end = Math.min(to, from + m - 1);
    for (let i = from; i < end; i++) {
      let c = b[i]!;
      if (folded && c >= 65 && c <= 90) c += 32;
      while (q > 0 && c !== u[q]) q = fail[q - 1]!;
      if (q === 0) return -1;
      if (++q === m) return m;
    }
    // Still inside a partial match after m - 1 units (or at the end of shorter bytes).
    return end === to ? q : -1;
  }

  /** The state after reading s[from, to) from `state`; `m` as soon as the needle is complete. */
  run(s: string, from: number, to: number, state: number): number {
    const { u, fail, m, folded } = this;
    let q = state;
    for (let i = from; i < to; i++) {
      const c = folded ? foldUnit(s.charCodeAt(i)) : s.charCodeAt(i);
      while (q > 0 && c !== u[q]) q = fail[q - 1]!;
      if (c === u[q]) {
        q++;
        if (q === m) return m;
      }
    }
    return q;
  }

  /**
   * True when a match begun before `s` (in state `state` > 0) completes within s's first m - 1
   * units. Stops as soon as the automaton is back in state 0: a match starting inside `s` is
   * `inside`'s to find.
   */
  private crosses(s: string, state: number): boolean {
    const { u, fail, m, folded } = this;
    let q = state;
    const to = Math.min(s.length, m - 1);
    for (let i = 0; i < to; i++) {
      const c = folded ? foldUnit(s.charCodeAt(i)) : s.charCodeAt(i);
      while (q > 0 && c !== u[q]) q = fail[q - 1]!;
      if (q === 0) return false;
      q++;
      if (q === m) return true;
    }
    return false;
  }

  /**
   * The state after reading the whole of `s` from `state`, `m` when the needle is complete in it
   * (including a match begun before it). Beyond the first m - 1 units, only a match inside `s`
   * (the native test) and the last m - 1 units (the state it ends in) matter; when s's last unit
   * is none of the needle's first m - 1, that state is 0 without reading them.
   */
  through(s: string, state: number): number {
    const m = this.m;
    const L = s.length;
    if (L < m) return this.run(s, 0, L, state);
    if (state > 0 && this.crosses(s, state)) return m;
    if (this.inside(s)) return m;
    const last = this.folded ? foldUnit(s.charCodeAt(L - 1)) : s.charCodeAt(L - 1);
    if (!this.ends(last)) return 0;
    return this.run(s, L - (m - 1), L, 0);
  }

  /**
   * The state after reading `s` from state 0, for text known not to hold the needle: only its
   * last m - 1 units can be a partial match, and none is when its last unit cannot end one.
   */
  tail(s: string): number {
    const L = s.length;
    if (L === 0) return 0;
    const last = this.folded ? foldUnit(s.charCodeAt(L - 1)) : s.charCodeAt(L - 1);
    if (!this.ends(last)) return 0;
    return this.run(s, Math.max(0, L - (this.m - 1)), L, 0);
  }

  /**
   * True when text starting with unit c (folded when the needle is) may go on with a partial match
   * begun before it: c is one of the needle's last m - 1 units. Otherwise the state after c is
   * the same from any state as from state 0 (1 when c is the needle's first unit, else 0), and
   * what came before does not matter.
   */
  continues(c: number): boolean {
    if (c < 128) return this.contAscii[c] === 1;
    for (let k = 1; k < this.m; k++) if (this.u[k] === c) return true;
    return false;
  }

  /** True when unit c (folded when the needle is) is one of the needle's first m - 1 units. */
  ends(c: number): boolean {
    if (c < 128) return this.endAscii[c] === 1;
    for (let k = 0; k < this.m - 1; k++) if (this.u[k] === c) return true;
    return false;
  }
}

