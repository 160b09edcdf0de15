/**
 * Free text, and a regex through its required literal, over one block's columns (issue 19): which
 * rows hold the needle in @rawstring or in a field free text searches, found column by column into
 * one row bitmap instead of a call per row and field (text-columns.ts says how each encoding is
 * searched).
 *
 * Templated raw strings (columns.ts TemplateRaw: `gap0 + value + gap1 + ...`) are not built: a row
 * holds the needle when one of its gaps or values does, or when a match crosses from one piece
 * into the next. The latter needs some piece before the cut to end in a partial match (a proper
 * prefix of the needle as its last units): were every piece's state 0 after it, read from 0, the
 * state would be 0 at every cut. So only rows with such a piece ("carries", marked per column like
 * the hits, rare for most needles) are walked piece by piece with the needle's automaton, and only
 * when an earlier filter kept them.
 *
 * A regex runs only on the rows that hold its literal, on the fields' values that hold it first (a
 * dictionary's entries once each), and on the row's raw string only when none matches and the raw
 * string holds the literal.
 */
import type { BlockView } from './block-view.js';
import { searchedField } from './filter.js';
import type { Needle } from './text-match.js';
import { gapCodes, gapColumn, gapEntries, keptGapColumn, rawColumn, readColumn, searchedColumn, type TextColumn } from './text-columns.js';
import type { TemplateRead } from './text-bytes.js';
import { layoutPairs, templateHead } from './template-heads.js';
import { LogsvcError } from '../lib/errors.js';

/** Rows whose raw string a regex was not run on, decided by their field values (tests check it happens). */
export const decidedByValues = { rows: 0 };
/**
 * Pieces a walk across template cuts passed over (walkHas), and rows a regex matched in the
 * pieces its literal was found across, no raw string built (tests check both happen).
 */
export const walkCounts = { skipped: 0, bySpan: 0 };
/** Searches of a block from its kept template head (template-heads.ts), and those that read its raw column after all (tests check both happen). */
export const keptTemplates = { searched: 0, read: 0 };

export interface TextSearch {
  nd: Needle;
  /** The regex a row's value or raw string must match besides holding the needle; null: holding it is the match. */
  re: RegExp | null;
  /** Every character a match of `re` can hold, when known (regex-literal.ts regexAlphabet). */
  alphabet?: Set<number> | null;
  /** `re` matching a piece of a string means it matches the string (regex-literal.ts regexLocal). */
  local?: boolean;
}

function corrupt(what: string): never {
  throw new LogsvcError('E_STATE_CORRUPT', `raw template: ${what}`);
}

/**
 * A block's raw template as a text search reads it: its gap columns, every (position, field column)
 * pair its layouts place (null: a layout out of range), and the layouts and each row's layout
 * number when a row is walked or built. From the thread's kept head when there is one
 * (template-heads.ts: the raw column's frame is then read only if a gap's codes or the layouts are
 * needed), else from the raw column's bytes (format 5: gap dictionaries stay bytes; the head is
 * kept for the next search), else decoded.
 */
interface SearchedTemplate {
  layouts: () => readonly (readonly number[])[];
  ids: () => readonly number[];
  pairs: Uint16Array | null;
  gaps: TextColumn[];
  names: readonly string[];
}

function templateOf(view: BlockView, nd: Needle): SearchedTemplate | null {
  const slot = view.templateHead;
  const head = slot?.head;
  if (slot !== null && head !== undefined) {
    const names = view.columnNames();
    let whole: TemplateRead | null = null;
    const read = (): TemplateRead => {
      if (whole === null) {
        keptTemplates.read++;
        whole = view.rawTemplate() ?? corrupt('a kept head for a raw column that is no template');
      }
      return whole;
    };
    keptTemplates.searched++;
    const gaps: TextColumn[] = new Array(head.starts.length - 1);
    for (let g = 0; g < gaps.length; g++) gaps[g] = keptGapColumn(slot.texts, head, g, () => gapCodes(read().gaps[g]!, view.n), nd);
    return { layouts: () => read().layouts, ids: () => read().ids(), pairs: head.pairs, gaps, names };
  }
  const read = view.rawTemplate();
  if (read !== null) {
    const names = view.columnNames();
    const pairs = layoutPairs(read.layouts, read.gaps.length, names.length);
    if (slot !== null && pairs !== null) {
      const made = templateHead(slot.texts, read.gaps.map(gapEntries), read.layouts, names.length);
      if (made !== null) slot.put(made);
    }
    return { layouts: () => read.layouts, ids: read.ids, pairs, gaps: read.gaps.map((g) => gapColumn(g, view.n, nd)), names };
  }
  const tpl = view.template();
  if (tpl === null) return null;
  return {
    layouts: () => tpl.layouts,
    ids: () => view.layoutIds(),
    pairs: layoutPairs(tpl.layouts, tpl.gaps.length, tpl.names.length),
    gaps: tpl.gaps.map((col) => gapColumn({ col }, view.n, nd)),
    names: tpl.names,
  };
}

/**
 * Row i of `view` (free text or regex) -> matched; null when the block is one this path does not
 * read (a template over a field name the body holds twice: the caller searches built strings).
 */
export function textRowTest(view: BlockView, search: TextSearch): ((i: number) => boolean) | null {
  const { nd, re } = search;
  const n = view.n;
  const hit = new Uint8Array(n);
  const tpl = templateOf(view, nd);
  if (tpl !== null && new Set(tpl.names).size !== tpl.names.length) return null;
  const made = new Map<string, TextColumn | null>();
  const fields: TextColumn[] = [];
  for (const name of view.fieldNames()) {
    if (!searchedField(name)) continue;
    const col = searchedColumn(view, name, nd);
    made.set(name, col);
    if (col !== null && col.mark(hit)) fields.push(col);
  }
  /** Row i: a field's value that holds the literal matches the regex. */
  const fieldMatches = (i: number): boolean => {
    for (let k = 0; k < fields.length; k++) if (fields[k]!.has(i) && fields[k]!.test(i, re!)) return true;
    return false;
  };

  if (tpl === null) {
    const raw = rawColumn(view, nd);
    raw.mark(hit);
    if (re === null) return (i) => hit[i] === 1;
    return (i) => hit[i] === 1 && (fieldMatches(i) || (raw.has(i) && re.test(raw.value(i)!)));
  }

  const gaps = tpl.gaps;
  // A regex whose characters are known: the rows with the literal in a gap kept apart.
  const alphabet = re === null ? null : (search.alphabet ?? null);
  const gapHit = alphabet === null ? hit : new Uint8Array(n);
  let gapsHit = false;
  for (const g of gaps) gapsHit = g.mark(gapHit) || gapsHit;
  if (gapHit !== hit && gapsHit) for (let i = 0; i < n; i++) if (gapHit[i] === 1) hit[i] = 1;
  const pieces: TextColumn[] = new Array(tpl.names.length);
  const carry = new Uint8Array(n);
  let carries = false;
  const G = gaps.length;
  const F = tpl.names.length;
  const placed = new Uint8Array(F);
  /** Per field: placed but not searched, and holding the needle in some row (its rows are walked). */
  const holdsUnsearched = new Uint8Array(F);
  const pairs = tpl.pairs ?? corrupt(`a layout of more fields than its ${G} gaps allow, or of a field column out of ${F}`);
  for (let p = 1; p < pairs.length; p += 2) placed[pairs[p]!] = 1;
  for (let j = 0; j < F; j++) {
    if (placed[j] === 0) continue;
    const name = tpl.names[j]!;
    let col = made.get(name);
    if (col === undefined) {
      // A placed field free text does not search itself: its matches count only inside the raw
      // string, so rows where it holds the needle are walked like carries.
      col = searchedColumn(view, name, nd);
      if (col !== null && col.mark(carry)) {
        holdsUnsearched[j] = 1;
        carries = true;
      }
    }
    if (col === null) corrupt(`no field column ${name}`);
    pieces[j] = col;
  }
  // A partial match at the end of a piece matters only when the piece after it may go on with it
  // (TextColumn.continues): a field at position k of a layout is followed by gap k + 1, gap k by
  // the layout's field k. Only such pieces' carries are marked. (Flags per gap and field column:
  // 0 not known yet, 1 yes, 2 no.)
  // A gap that cannot end in one (TextColumn.mayCarry, a cheap look) is not asked about the
  // field after it; a field is asked whether it may end in one only when a gap after it goes on
  // (a dictionary field's look computes every entry's end state; most fields of JSON lines are
  // followed by gaps that start with `"` or `,`).
  const gapGoesOn = new Uint8Array(G);
  const fieldGoesOn = new Uint8Array(F);
  const gapCarries = new Uint8Array(G);
  const fieldCarries = new Uint8Array(F);
  for (let k = 0; k < G; k++) if (!gaps[k]!.mayCarry()) gapCarries[k] = 2;
  // Each (position, field) pair of the layouts once: what is decided here depends only on which pairs occur.
  for (let p = 0; p < pairs.length; p += 2) {
    const k = pairs[p]!;
    const j = pairs[p + 1]!;
    if (gapCarries[k] === 0) {
      if (fieldGoesOn[j] === 0) fieldGoesOn[j] = pieces[j]!.continues() ? 1 : 2;
      if (fieldGoesOn[j] === 1) gapCarries[k] = 1;
    }
    if (fieldCarries[j] === 0) {
      if (gapGoesOn[k + 1] === 0) gapGoesOn[k + 1] = gaps[k + 1]!.continues() ? 1 : 2;
      if (gapGoesOn[k + 1] === 1) fieldCarries[j] = pieces[j]!.mayCarry() ? 1 : 2;
    }
  }
  let layoutList: readonly (readonly number[])[] | null = null;
  const layoutsOf = (): readonly (readonly number[])[] => (layoutList ??= tpl.layouts());
  for (let k = 0; k < G; k++) if (gapCarries[k] === 1) carries = gaps[k]!.markCarries(carry) || carries;
  for (let j = 0; j < F; j++) if (fieldCarries[j] === 1) carries = pieces[j]!.markCarries(carry) || carries;
  let ids: readonly number[] | null = null;
  const idOf = (i: number): number => {
    const id = (ids ??= tpl.ids())[i]!;
    const layout = layoutsOf()[id];
    if (layout === undefined || gaps.length <= layout.length) corrupt(`event ${i} has no layout ${id}`);
    return id;
  };
  const layoutOf = (i: number): readonly number[] => layoutsOf()[idOf(i)]!;
  const m = nd.m;
  // Pieces left unread (text-columns.ts UnreadColumn) are read once a row is walked or built.
  let read = false;
  const fresh = new Uint8Array(F);
  const readPiece = (j: number): TextColumn => {
    if (fresh[j] === 0) {
      pieces[j] = readColumn(pieces[j]!);
      fresh[j] = 1;
    }
    return pieces[j]!;
  };
  const readPieces = (): void => {
    for (let j = 0; j < F; j++) if (placed[j] === 1) readPiece(j);
    read = true;
  };
  /** Row i's raw string holds the needle: its pieces read in order, the automaton's state carried across. */
  const rawHas = (i: number): boolean => {
    if (!read) readPieces();
    const layout = layoutOf(i);
    let q = gaps[0]!.next(i, 0);
    for (let k = 0; k < layout.length && q < m; k++) {
      q = pieces[layout[k]!]!.next(i, q);
      if (q < m) q = gaps[k + 1]!.next(i, q);
    }
    return q === m;
  };
  /**
   * Per layout, for each position p of its pieces (gap k at 2k, its field k at 2k + 1; 2 * length + 1
   * past the last), the first position from p on whose piece may carry a partial match into the
   * piece after it (flagged above), or holds the needle though free text does not search it.
   */
  let jumps: Int32Array[] | null = null;
  const jumpsOf = (): Int32Array[] =>
    layoutsOf().map((layout) => {
      const end = 2 * layout.length + 1;
      const to = new Int32Array(end + 1).fill(end);
      for (let p = end - 1; p >= 0; p--) {
        const k = p >> 1;
        const j = layout[k]!;
        const carrying = (p & 1) === 0 ? gapCarries[k] === 1 : holdsUnsearched[j] === 1 || (fieldCarries[j] === 1 && gapGoesOn[k + 1] !== 2);
        to[p] = carrying ? p : to[p + 1]!;
      }
      return to;
    });
  /**
   * rawHas for a row no searched piece holds the needle in (hit[i] is 0): at state 0 the walk
   * jumps to the next piece that may carry. A piece passed over, read from 0, ends in state 0 (no
   * value of its column ends in a partial match, none holds the needle in this row) or ends in a
   * partial match the piece after it cannot go on with (TextColumn.continues: its first unit
   * reads from any state as from 0), so the state after the next piece is the same as when the
   * walk starts there from 0. Rows of the access log's `POST /api/...` are walked from the method
   * field to the url, not from the line's start to its end. Pieces left unread are read as the
   * walk reaches them. When it finds the needle, the pieces from where it last left state 0 to
   * the one completing it (spanFrom to spanTo) hold it.
   */
  let spanFrom = 0;
  let spanTo = 0;
  const walkHas = (i: number): boolean => {
    const id = idOf(i);
    const layout = layoutsOf()[id]!;
    const to = (jumps ??= jumpsOf())[id]!;
    const end = 2 * layout.length + 1;
    let q = 0;
    let p = to[0]!;
    walkCounts.skipped += Math.min(p, end);
    spanFrom = p;
    while (p < end) {
      q = ((p & 1) === 0 ? gaps[p >> 1]! : readPiece(layout[p >> 1]!)).next(i, q);
      if (q === m) {
        spanTo = p;
        return true;
      }
      p++;
      if (q === 0) {
        spanFrom = to[p]!;
        walkCounts.skipped += spanFrom - p;
        p = spanFrom;
      }
    }
    return false;
  };
  const holds = carries ? (i: number): boolean => hit[i] === 1 || (carry[i] === 1 && walkHas(i)) : (i: number): boolean => hit[i] === 1;
  if (re === null) return holds;
  /** The text of the pieces a walk found the needle across (walkHas): a piece of row i's raw string. */
  const spanText = (i: number): string => {
    const layout = layoutOf(i);
    let s = '';
    for (let p = spanFrom; p <= spanTo; p++) s += ((p & 1) === 0 ? gaps[p >> 1]! : pieces[layout[p >> 1]!]!).value(i) ?? corrupt(`event ${i} lacks a piece`);
    return s;
  };
  const rawText = (i: number): string => {
    if (!read) readPieces();
    const layout = layoutOf(i);
    let s = gaps[0]!.value(i) ?? corrupt(`event ${i} lacks a piece`);
    for (let k = 0; k < layout.length; k++) s += (pieces[layout[k]!]!.value(i) ?? corrupt(`event ${i} lacks a piece`)) + (gaps[k + 1]!.value(i) ?? corrupt(`event ${i} lacks a piece`));
    return s;
  };
  /** A gap's value next to a field's: empty only at the raw string's start or end (`edge`), else its bordering unit is outside the alphabet. */
  const borders = (g: string | null, at: 'start' | 'end', edge: boolean): boolean => {
    if (g === null) corrupt('an event lacks a piece');
    if (g.length === 0) return edge;
    return !alphabet!.has(g.charCodeAt(at === 'start' ? 0 : g.length - 1));
  };
  /**
   * Row i's literal is only inside field values (not in a gap, nor across a cut), each bordered by
   * units outside the regex's alphabet: a match reaching into such a value stays inside it, and
   * holds the literal (every match does), so the regex matches the raw string only where it
   * matches one of those values, which `fieldMatches` tried.
   */
  const onlyInValues = (i: number): boolean => {
    if (gapHit[i] === 1 || (carries && carry[i] === 1)) return false;
    const layout = layoutOf(i);
    for (let k = 0; k < layout.length; k++) {
      if (!pieces[layout[k]!]!.has(i)) continue;
      if (!borders(gaps[k]!.value(i), 'end', k === 0) || !borders(gaps[k + 1]!.value(i), 'start', k + 1 === layout.length)) return false;
    }
    return true;
  };
  return (i) => {
    // Known to hold the literal in its raw string when it was walked (not marked by a piece).
    let inRaw = false;
    if (hit[i] !== 1) {
      if (!(carries && carry[i] === 1 && walkHas(i))) return false;
      // A match in the pieces holding the literal is one in the raw string (the pattern does not
      // look past its match); none there: the whole raw string is tried below.
      if (search.local === true && re.test(spanText(i))) {
        walkCounts.bySpan++;
        return true;
      }
      inRaw = true;
    }
    if (fieldMatches(i)) return true;
    if (!inRaw && alphabet !== null && onlyInValues(i)) {
      decidedByValues.rows++;
      return false;
    }
    return (inRaw || rawHas(i)) && re.test(rawText(i));
  };
}
