/**
 * Text search over a block's templated raw strings without building them (issue 19).
 *
 * A templated row's @rawstring is `gap0 + value(layout[0]) + gap1 + ... + gapL` (columns.ts
 * TemplateRaw). "Does the raw string contain the needle" is answered by running a KMP automaton
 * over those pieces in layout order: the automaton's state (how much of the needle the text so far
 * ends with) is carried from piece to piece, so a match that spans a gap and a value is found as
 * well as one inside a piece. A dictionary piece (nearly all gaps, and fields with few distinct
 * values) has its transition computed once per (entry, state) and then looked up; another piece
 * costs one native test of its value plus at most 2 × (needle length − 1) automaton steps at its
 * ends. Case folding is unit by unit (casefold.ts `foldUnit`, as the bloom folds), on the fly:
 * nothing is allocated per row.
 *
 * The same walk builds one row's raw string on demand (`text`), so a regex whose required literal
 * a row lacks is never run on that row, and only the rows that have it are built (regex-literal.ts).
 */
import type { BlockView } from './block-view.js';
import { foldUnit, foldedIncludes, isTokenUnit } from './casefold.js';
import { decodeStrings, type StringColumn } from '../segments/columns.js';
import { LogsvcError } from '../lib/errors.js';

/** A needle with its KMP failure table, folded (case-insensitive) or exact. */
export class Needle {
  readonly u: Uint16Array;
  readonly m: number;
  /** fail[q]: the state after a mismatch in state q + 1 (the longest proper border of u[0..q]). */
  private readonly fail: Int32Array;
  /** 1 for the ASCII units among the needle's first m - 1 (the units a partial match can end with). */
  private readonly endAscii: Uint8Array;
  /** The needle inside one whole value (native, allocation-free for an ASCII folded needle or an exact one). */
  readonly inside: (s: string) => boolean;

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
    if (!folded) this.inside = (s) => s.includes(text);
    else if (u.every((c) => c < 0x80)) this.inside = foldedIncludes(text);
    else this.inside = (s) => this.run(s, 0, s.length, 0) === m;
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

  /** True when unit c is one of the needle's first m - 1 units. */
  private ends(c: number): boolean {
    if (c < 128) return this.endAscii[c] === 1;
    for (let k = 0; k < this.m - 1; k++) if (this.u[k] === c) return true;
    return false;
  }
}

/** Transition table entries one dictionary piece may hold (2 bytes each). */
const MAX_TABLE = 1 << 18;

/** One position of a template (a gap, or a field column), read per row. */
interface Piece {
  /** The automaton state after this row's piece, from `state`. */
  next(i: number, state: number): number;
  /** This row's piece. */
  text(i: number): string;
}

function corrupt(what: string): never {
  throw new LogsvcError('E_STATE_CORRUPT', `raw template: ${what}`);
}

/** A dictionary piece: each (entry, state) transition computed once, then looked up. */
class DictPiece implements Piece {
  private readonly tab: Int16Array | Int32Array;
  constructor(
    private readonly d: readonly string[],
    private readonly codes: Uint8Array | Uint16Array,
    private readonly absent: number,
    private readonly nd: Needle,
  ) {
    const size = d.length * nd.m;
    this.tab = nd.m < 32767 ? new Int16Array(size).fill(-1) : new Int32Array(size).fill(-1);
  }
  next(i: number, state: number): number {
    const c = this.codes[i]!;
    if (c === this.absent || c >= this.d.length) corrupt(`event ${i} lacks a piece`);
    const at = c * this.nd.m + state;
    let t = this.tab[at]!;
    if (t < 0) this.tab[at] = t = this.nd.through(this.d[c]!, state);
    return t;
  }
  text(i: number): string {
    const c = this.codes[i]!;
    if (c === this.absent || c >= this.d.length) corrupt(`event ${i} lacks a piece`);
    return this.d[c]!;
  }
}

class PlainPiece implements Piece {
  constructor(
    private readonly values: readonly (string | null | undefined)[],
    private readonly nd: Needle,
  ) {}
  next(i: number, state: number): number {
    const v = this.values[i];
    if (v === null || v === undefined) corrupt(`event ${i} lacks a piece`);
    return this.nd.through(v, state);
  }
  text(i: number): string {
    const v = this.values[i];
    if (v === null || v === undefined) corrupt(`event ${i} lacks a piece`);
    return v;
  }
}

/** A dictionary string column's codes as numbers (a copy for 2-byte codes). */
function codesOf(col: Extract<StringColumn, { e: 'k' }>, n: number): { codes: Uint8Array | Uint16Array; absent: number } {
  if (col.i.byteLength !== n * col.w) corrupt('a dictionary column has the wrong length');
  if (col.w === 1) return { codes: col.i, absent: 255 };
  const codes = new Uint16Array(n);
  const b = col.i;
  for (let k = 0; k < n; k++) codes[k] = b[2 * k]! | (b[2 * k + 1]! << 8);
  return { codes, absent: 65535 };
}

/** The raw strings of a templated block, searched and built row by row. */
export interface TemplateRows {
  /** True when row i's raw string contains the needle. */
  has(i: number): boolean;
  /** Row i's raw string (built for this call). */
  text(i: number): string;
  /** Row i's layout number (rows of one layout have the same fields placed in their raw strings). */
  layoutId(i: number): number;
  /** The names of the fields whose values row i's raw string holds (its layout's columns). */
  placed(i: number): readonly string[];
}

/** Row access to a block's templated raw strings for `nd`; null when the block's raw strings are not templates. */
export function templateRows(view: BlockView, nd: Needle): TemplateRows | null {
  const tpl = view.template();
  if (tpl === null) return null;
  const n = view.n;
  // A dictionary's transition table holds entries × needle length states: bounded (a long needle
  // over a large dictionary reads the entries' text instead).
  const small = (entries: number): boolean => entries * nd.m <= MAX_TABLE;
  const gaps: Piece[] = tpl.gaps.map((g) => {
    if (g.e === 'k' && small(g.d.length)) {
      const { codes, absent } = codesOf(g, n);
      return new DictPiece(g.d, codes, absent, nd);
    }
    return new PlainPiece(decodeStrings(g, n), nd);
  });
  const fields: (Piece | undefined)[] = new Array(tpl.names.length);
  const field = (j: number): Piece => {
    let p = fields[j];
    if (p !== undefined) return p;
    const name = tpl.names[j];
    if (name === undefined) corrupt(`no field column ${j}`);
    const dict = view.dict(name);
    if (dict !== null && small(dict.d.length)) p = new DictPiece(dict.d, dict.codes, dict.absent, nd);
    else p = new PlainPiece(view.field(name) ?? corrupt(`no field column ${name}`), nd);
    fields[j] = p;
    return p;
  };
  const { layouts, ids } = tpl;
  const layoutOf = (i: number): readonly number[] => {
    const layout = layouts[ids[i]!];
    if (layout === undefined || gaps.length <= layout.length) corrupt(`event ${i} has no layout ${ids[i]}`);
    return layout;
  };
  const m = nd.m;
  const placedNames = layouts.map((layout) => layout.map((j) => tpl.names[j] ?? corrupt(`no field column ${j}`)));
  return {
    layoutId: (i) => ids[i]!,
    placed: (i) => placedNames[ids[i]!] ?? corrupt(`event ${i} has no layout ${ids[i]}`),
    has(i) {
      const layout = layoutOf(i);
      let q = gaps[0]!.next(i, 0);
      for (let k = 0; k < layout.length; k++) {
        if (q === m) return true;
        q = field(layout[k]!).next(i, q);
        if (q === m) return true;
        q = gaps[k + 1]!.next(i, q);
      }
      return q === m;
    },
    text(i) {
      const layout = layoutOf(i);
      let s = gaps[0]!.text(i);
      for (let k = 0; k < layout.length; k++) s += field(layout[k]!).text(i) + gaps[k + 1]!.text(i);
      return s;
    },
  };
}

/** Per row, the first and last unit of one template piece as token-ness: -1 empty or absent, 0 not a token unit, 1 a token unit. */
interface Edges {
  first: Int8Array;
  last: Int8Array;
}

function edgesOfValues(values: readonly (string | null | undefined)[], n: number): Edges {
  const first = new Int8Array(n).fill(-1);
  const last = new Int8Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v === null || v === undefined || v.length === 0) continue;
    first[i] = isTokenUnit(v.charCodeAt(0)) ? 1 : 0;
    last[i] = isTokenUnit(v.charCodeAt(v.length - 1)) ? 1 : 0;
  }
  return edges(first, last);
}

function edges(first: Int8Array, last: Int8Array): Edges {
  return { first, last };
}

/** A dictionary's entries' edges, then each row's by its code (no string per row). */
function edgesOfDict(d: readonly string[], codes: Uint8Array | Uint16Array, absent: number, n: number): Edges {
  const e = edgesOfValues(d, d.length);
  const first = new Int8Array(n).fill(-1);
  const last = new Int8Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const c = codes[i]!;
    if (c === absent || c >= d.length) continue;
    first[i] = e.first[c]!;
    last[i] = e.last[c]!;
  }
  return edges(first, last);
}

const CUT = 2;

/** The token-ness of the text's last unit after piece `e` of row i follows `last`, or CUT when the two join inside a token run. */
function join(last: number, e: Edges, i: number): number {
  const f = e.first[i]!;
  if (f < 0) return last;
  if (last === 1 && f === 1) return CUT;
  return e.last[i]!;
}

/**
 * For a row of a templated block: true when a cut between two of its pieces (gap | value) falls
 * inside a token run of its raw string (token units on both sides), so a word may span pieces;
 * false when every token run lies inside one piece. Null for a block whose raw strings are not
 * templates. Asked only for the rows that need it (a row a gap or value already matched does not).
 * Computed from each piece's first and last unit: dictionary columns per entry, integers and IPv4
 * addresses from their numbers (digits, a leading '-'), without building the pieces' text.
 */
export function cutRows(view: BlockView): ((i: number) => boolean) | null {
  const tpl = view.template();
  if (tpl === null) return null;
  const n = view.n;
  const gapEdges = tpl.gaps.map((g) => {
    if (g.e !== 'k') return edgesOfValues(decodeStrings(g, n), n);
    const { codes, absent } = codesOf(g, n);
    return edgesOfDict(g.d, codes, absent, n);
  });
  const fieldEdges: (Edges | undefined)[] = new Array(tpl.names.length);
  const fieldOf = (j: number): Edges => {
    let e = fieldEdges[j];
    if (e !== undefined) return e;
    const name = tpl.names[j] ?? corrupt(`no field column ${j}`);
    const enc = view.encoding(name);
    const ints = enc === 'i' ? view.ints(name) : null;
    if (enc === '4') e = edges(new Int8Array(n).fill(1), new Int8Array(n).fill(1));
    else if (ints !== null) {
      const first = new Int8Array(n);
      for (let i = 0; i < n; i++) first[i] = ints[i]! >= 0 ? 1 : 0;
      e = edges(first, new Int8Array(n).fill(1));
    } else {
      const dict = view.dict(name);
      e = dict !== null ? edgesOfDict(dict.d, dict.codes, dict.absent, n) : edgesOfValues(view.field(name) ?? [], n);
    }
    fieldEdges[j] = e;
    return e;
  };
  const { layouts, ids } = tpl;
  return (i) => {
    const layout = layouts[ids[i]!];
    if (layout === undefined || gapEdges.length <= layout.length) return true;
    let last = -1;
    for (let k = 0; k <= layout.length && last !== CUT; k++) {
      last = join(last, gapEdges[k]!, i);
      if (k < layout.length && last !== CUT) last = join(last, fieldOf(layout[k]!), i);
    }
    return last === CUT;
  };
}
