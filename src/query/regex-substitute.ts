/**
 * replace() with less regex work where the pattern allows (issue 21): a pattern that is a plain
 * literal (`"error"`, `"\\."`, `"/v2/"`) and a replacement that refers to no group (no `$`). Every
 * match of such a pattern is the literal, so a value that does not contain it is left as it is,
 * found so by `includes` instead of a regex run; a value that does goes through the regex.
 *
 * What was measured and left out (docs/benchmarks.md, fifth pass): V8's own global replace of the
 * occurrences is as fast as split/join or replaceAll, so the regex does the replacing; and a
 * one-character class (`"\\d"`) rebuilt unit by unit in JavaScript, from a table of the units the
 * regex holds, was slower than the regex on the values a scan reads (slices of a decoded column),
 * so such patterns take the regex as any other, value by value.
 *
 * A one-unit pattern over a stored text column is replaced column by column instead
 * (ColumnSubstitution): the block's UTF-8 bytes with the matched ASCII units swapped, decoded once.
 */
import { substituteAsciiUnits } from '../segments/columns.js';
import type { ColumnEvent } from './block-view.js';
import { PerBlock } from './per-entry.js';
import type { CompiledRegex } from './regex.js';
import type { Ev } from './runtime.js';

/** `v` with every match replaced (`v` itself when nothing matches). */
export type Substitute = (v: string) => string;

/** A `\` escape of a character with no special meaning in a JS (non-`u`) pattern: the character itself. */
const PLAIN_ESCAPE = /^[^A-Za-z0-9]$/;
const SPECIAL = new Set(['\\', '^', '$', '.', '|', '?', '*', '+', '(', ')', '[', ']', '{', '}']);

/** The literal the JS regex source `src` matches exactly, or null when it is not one. */
export function literalOf(src: string): string | null {
  let out = '';
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '\\') {
      const n = src[i + 1];
      if (n === undefined || !PLAIN_ESCAPE.test(n)) return null;
      out += n;
      i++;
      continue;
    }
    if (SPECIAL.has(c)) return null;
    out += c;
  }
  return out.length > 0 ? out : null;
}

/**
 * A substitution for `cr` and the JS replacement text `replacement` (as String.replace takes it),
 * or null when the general path must run.
 */
export function substitution(cr: CompiledRegex, replacement: string): Substitute | null {
  if (replacement.includes('$')) return null;
  const { source, flags } = cr.re;
  // regex.ts folds case by rewriting the pattern (a literal under `i` is not one); a JS `i`, `u`
  // or `y` would change what the source means.
  if (/[iuyv]/.test(flags)) return null;
  const lit = literalOf(source);
  if (lit === null) return null;
  const all = cr.all;
  return (v) => {
    if (!v.includes(lit)) return v;
    all.lastIndex = 0;
    return v.replace(all, replacement);
  };
}

/** Escapes that match one unit outside a class (not `\b`, `\B`: assertions; not digits: back references). */
const UNIT_ESCAPE = /^[dDwWsStnrfv]$/;

/**
 * Whether every match of the JS regex source `src` (flags `flags`) is exactly one UTF-16 unit,
 * decided by that unit alone: one class (`[...]`, `\d`, `.` ...) or one character, no quantifier,
 * no assertion. Not under `u`/`v` (a class may then match a surrogate pair) or `y`.
 */
export function oneUnitPattern(src: string, flags: string): boolean {
  if (/[uvy]/.test(flags)) return false;
  if (src === '.') return true;
  if (src.length === 1) return !SPECIAL.has(src);
  if (src.length === 2 && src[0] === '\\') return UNIT_ESCAPE.test(src[1]!) || PLAIN_ESCAPE.test(src[1]!);
  if (src[0] !== '[') return false;
  // Outside `v`, a class ends at its first unescaped `]` (`[]` and `[^]` included); `[` inside is a character.
  let i = src[1] === '^' ? 2 : 1;
  while (i < src.length && src[i] !== ']') i += src[i] === '\\' ? 2 : 1;
  return i === src.length - 1;
}

/** Rows of a block a stage has seen before it replaces the whole column, if they came densely (see of()). */
const DENSE_AFTER = 16;
/** Most bytes a block's replaced column may take (else value by value). */
const MAX_COLUMN_BYTES = 8 * 1024 * 1024;

/**
 * replace() of a one-unit pattern (oneUnitPattern) with a plain replacement, over a stored text
 * column: the block's values replaced at once from its UTF-8 bytes (columns.ts substituteAsciiUnits),
 * read back by row. Values with other units, and events that are not a block's unchanged rows, are
 * left to the caller's regex. A block is replaced as a whole at its first row when that is row 0
 * (the per-event path would decode the whole column at its first value anyway), else after
 * DENSE_AFTER of its rows when they came from its first 2 x DENSE_AFTER; a block whose rows come
 * sparsely (a filter before kept few; one the scan reads row by row) is not.
 */
export class ColumnSubstitution extends PerBlock {
  private seen = 0;
  private values: (string | null | undefined)[] | null = null;
  private hit: Uint8Array | null = null;

  private constructor(
    private readonly field: string,
    private readonly one: RegExp,
    private readonly replacement: string,
    private readonly maxUnits: number,
  ) {
    super();
  }

  /** For `cr` replaced by the JS replacement `replacement` in `field`, or null when not such a case. */
  static of(cr: CompiledRegex, replacement: string, field: string, maxUnits: number): ColumnSubstitution | null {
    const c = field.charCodeAt(0);
    if (c === 64 /* @ */ || c === 35 /* # */ || replacement.includes('$')) return null;
    const { source, flags } = cr.all;
    if (!oneUnitPattern(source, flags)) return null;
    // Written as UTF-8: a lone surrogate would not come back.
    if (Buffer.from(replacement, 'utf8').toString('utf8') !== replacement) return null;
    return new ColumnSubstitution(field, new RegExp(source, flags.replace('g', '')), replacement, maxUnits);
  }

  protected override enter(): void {
    this.seen = 0;
    this.values = null;
  }

  /** Row `e`'s replaced value: a string, null (it has none), or undefined (the caller replaces it). */
  rowValue(e: Ev): string | null | undefined {
    const view = this.blockOf(e);
    if (view === null) return undefined;
    const row = (e as ColumnEvent).rowIndex;
    if (this.values === null) {
      // Its first row (none decoded yet), or DENSE_AFTER rows that came densely; never a block read row by row.
      const first = this.seen++ === 0 && row === 0;
      if ((!first && (this.seen !== DENSE_AFTER || row >= 2 * DENSE_AFTER)) || view.readsFew()) return undefined;
      const run = view.textRun(this.field);
      if (run === null) return undefined;
      this.values = substituteAsciiUnits(run, view.n, this.units(), this.replacement, this.maxUnits, MAX_COLUMN_BYTES);
      if (this.values === null) return undefined;
    }
    return this.values[row];
  }

  /** Which ASCII units the pattern matches (asked once per query, at its first block). */
  private units(): Uint8Array {
    if (this.hit !== null) return this.hit;
    const hit = new Uint8Array(128);
    for (let c = 0; c < 128; c++) hit[c] = this.one.test(String.fromCharCode(c)) ? 1 : 0;
    return (this.hit = hit);
  }
}
