/**
 * The @rawstring column of a block body (split from columns.ts, whose number and string encodings
 * it builds on): the raw strings back to back, or templates over the block's field columns.
 */
import { LogsvcError } from '../lib/errors.js';
import { isWord } from './bloom.js';
import { decodeNumbers, decodeStrings, encodeNumbers, encodeStrings, type NumberColumn, type StringColumn } from './columns.js';

/**
 * The raw strings, in one of two encodings:
 *
 * - `{e: "j", b, l}`: one UTF-8 buffer of all of them back to back, plus their byte lengths. A
 *   plain run of text compresses better than msgpack's per-string headers interleaved with it.
 * - `{e: "t", t, li, g}`: templates over the block's field columns. Most of a parsed line is its
 *   field values (an access-log line is ~75 % client, url, status, size, agent...), which the
 *   block stores anyway; the raw string keeps only the text between them. Event i's raw string is
 *   `g[0][i] + F(t[li[i]][0])[i] + g[1][i] + F(t[li[i]][1])[i] + ... + g[k][i]`, where F(j) is the
 *   j-th field column of the body, `t` the distinct layouts (field positions in raw order), `li`
 *   each event's layout (a number column) and `g[p]` the p-th gap of every event (a string
 *   column: the gaps at one position repeat a lot, " - ", "] \"", and compress to almost nothing).
 *   Field columns of such a block never refer back into the raw strings (no `x` columns).
 */
export type RawColumn = { e: 'j'; b: Uint8Array; l: NumberColumn } | TemplateRaw;

export interface TemplateRaw {
  e: 't';
  t: number[][];
  li: NumberColumn;
  g: StringColumn[];
}

export function encodeRaw(raw: readonly string[]): RawColumn {
  const parts = raw.map((r) => Buffer.from(r, 'utf8'));
  return { e: 'j', b: Buffer.concat(parts), l: encodeNumbers(parts.map((p) => p.length)) };
}

/** Values shorter than this stay in the gaps: a reference would cost more than it saves. */
const MIN_TEMPLATE_VALUE = 2;
/** Per event, at most this many field values are looked for in the raw string. */
const MAX_TEMPLATE_FIELDS = 64;
/** Templates are used when the field values cover at least this share of the raw text. */
const MIN_TEMPLATE_COVER = 0.25;

/** True if a cut of `s` before index `at` would split a surrogate pair (each half would be stored alone, as U+FFFD). */
function splitsPair(s: string, at: number): boolean {
  if (at <= 0 || at >= s.length) return false;
  const lo = s.charCodeAt(at);
  const hi = s.charCodeAt(at - 1);
  return lo >= 0xdc00 && lo <= 0xdfff && hi >= 0xd800 && hi <= 0xdbff;
}

/**
 * What a template tells the skip index about the raw strings (filled in by encodeTemplate). An
 * event is `clean` when no placed value starts or ends inside a token run of its raw string (word
 * units on both sides of the cut): then every token run of the raw string lies wholly inside one
 * gap or one value, and the raw string's tokens and grams are those of its pieces. The block
 * encoder then takes them from the distinct `gaps` and the distinct values of the placed
 * `columns` instead of scanning every raw string: most pieces repeat.
 */
export interface TemplatePieces {
  clean: Uint8Array;
  /** The gaps of the clean events, each distinct one once. */
  gaps: Set<string>;
  /** Field columns (body order) placed in some clean event. */
  columns: Set<number>;
}

export function templatePieces(count: number): TemplatePieces {
  return { clean: new Uint8Array(count), gaps: new Set(), columns: new Set() };
}

/** True if cutting `s` before index `at` splits a token run. */
function cutsRun(s: string, at: number): boolean {
  return at > 0 && at < s.length && isWord(s.charCodeAt(at - 1)) && isWord(s.charCodeAt(at));
}

/**
 * Raw strings as templates over `fields` (the block's field columns, in body order), or null
 * when the field values cover too little of the raw text to pay. Each event's values are placed
 * left to right: the earliest occurrence wins, a value overlapping one already placed is looked
 * for again after it, and each column is used at most once per event; an event whose placeable
 * fields are those of an earlier event first tries that event's layout (each value searched after
 * the previous cut), which is most of the work saved. `pieces`, when given, is
 * filled in (see TemplatePieces); it is only meaningful when a template is returned.
 */
export function encodeTemplate(raw: readonly string[], fields: readonly (readonly (string | null | undefined)[])[], count: number, pieces?: TemplatePieces): TemplateRaw | null {
  // A layout key holds one UTF-16 unit per column (index + 1).
  if (fields.length >= 0xffff) return null;
  const layouts = new Map<string, number>();
  const layoutIds = new Array<number>(count);
  /** Layouts whose columns are already in pieces.columns. */
  const cleanLayouts: number[] = [];
  const gaps: (string | undefined)[][] = [];
  let covered = 0;
  let total = 0;
  // Candidates of one event, kept sorted by position (then longer first): column, position, length.
  const width = Math.min(fields.length, MAX_TEMPLATE_FIELDS);
  const cCol = new Int32Array(width);
  const cAt = new Int32Array(width);
  const cLen = new Int32Array(width);
  let nc = 0;
  const insert = (j: number, at: number, len: number, from: number): void => {
    let k = nc++;
    while (k > from && (cAt[k - 1]! > at || (cAt[k - 1] === at && cLen[k - 1]! < len))) {
      cCol[k] = cCol[k - 1]!;
      cAt[k] = cAt[k - 1]!;
      cLen[k] = cLen[k - 1]!;
      k--;
    }
    cCol[k] = j;
    cAt[k] = at;
    cLen[k] = len;
  };
  // The placement of one event, in raw order: column, position, length.
  const pCol = new Int32Array(width);
  const pAt = new Int32Array(width);
  const pLen = new Int32Array(width);
  /**
   * Fast path: events with the same placeable fields mostly share a layout. The last layout seen
   * for each set of placeable columns is tried first, each value looked for after the one before
   * it: a short search from the previous cut instead of one search from the start per column.
   * Either way the result is a valid split of the raw string; only which one may differ in rare
   * cases (a value that also occurs earlier in the text).
   */
  const bySet = new Map<number | string, number>();
  const layoutCols: number[][] = [];
  /** Event i's placeable columns: a bit mask for up to 30 columns, else a string of 15-bit chunks. */
  const small = fields.length <= 30;
  const placeableSet = (i: number): number | string => {
    let mask = 0;
    let key = '';
    for (let from = 0; from < fields.length; from += 15) {
      let chunk = 0;
      for (let j = from; j < Math.min(fields.length, from + 15); j++) {
        const v = fields[j]![i];
        if (v !== null && v !== undefined && v.length >= MIN_TEMPLATE_VALUE) chunk |= 1 << (j - from);
      }
      if (small) mask += chunk * 2 ** from;
      else key += String.fromCharCode(chunk);
    }
    return small ? mask : key;
  };
  /** Places event i by the layout `id` (into pCol/pAt/pLen); false when it does not fit. */
  const placeLike = (r: string, i: number, id: number): boolean => {
    const cols = layoutCols[id]!;
    let pos = 0;
    for (let k = 0; k < cols.length; k++) {
      const j = cols[k]!;
      const v = fields[j]![i]!;
      const at = r.indexOf(v, pos);
      if (at < 0 || splitsPair(r, at) || splitsPair(r, at + v.length)) return false;
      pCol[k] = j;
      pAt[k] = at;
      pLen[k] = v.length;
      pos = at + v.length;
    }
    return true;
  };
  /** General placement: every placeable value, earliest first (see above). */
  const placeAll = (r: string, i: number): number => {
    nc = 0;
    for (let j = 0; j < fields.length && nc < width; j++) {
      const v = fields[j]![i];
      if (v === null || v === undefined || v.length < MIN_TEMPLATE_VALUE) continue;
      const at = r.indexOf(v);
      if (at < 0 || splitsPair(r, at) || splitsPair(r, at + v.length)) continue;
      insert(j, at, v.length, 0);
    }
    let pos = 0;
    let placed = 0;
    for (let k = 0; k < nc; k++) {
      const j = cCol[k]!;
      const len = cLen[k]!;
      let at = cAt[k]!;
      if (at < pos) {
        // Overlaps a value already placed: look again after it, and put it back in order.
        const v = fields[j]![i]!;
        at = r.indexOf(v, pos);
        if (at >= 0 && !splitsPair(r, at) && !splitsPair(r, at + len)) {
          const rest = nc;
          nc = k + 1;
          // Shift the tail into a fresh ordered insert of (j, at) among positions k+1..rest-1.
          for (let q = k + 1; q < rest; q++) {
            cCol[q - 1] = cCol[q]!;
            cAt[q - 1] = cAt[q]!;
            cLen[q - 1] = cLen[q]!;
          }
          nc = rest - 1;
          insert(j, at, len, k);
          k--;
        }
        continue;
      }
      pCol[placed] = j;
      pAt[placed] = at;
      pLen[placed] = len;
      placed++;
      pos = at + len;
    }
    return placed;
  };
  for (let i = 0; i < count; i++) {
    const r = raw[i]!;
    total += r.length;
    const set = placeableSet(i);
    let id = bySet.get(set) ?? -1;
    const same = id >= 0 && placeLike(r, i, id);
    const placed = same ? layoutCols[id]!.length : placeAll(r, i);
    let pos = 0;
    let key = '';
    let clean = true;
    for (let p = 0; p < placed; p++) {
      const at = pAt[p]!;
      (gaps[p] ??= new Array(count))[i] = r.slice(pos, at);
      if (!same) key += String.fromCharCode(pCol[p]! + 1);
      pos = at + pLen[p]!;
      covered += pLen[p]!;
      if (clean && (cutsRun(r, at) || cutsRun(r, pos))) clean = false;
    }
    (gaps[placed] ??= new Array(count))[i] = r.slice(pos);
    if (!same) {
      id = layouts.get(key) ?? -1;
      if (id < 0) {
        layouts.set(key, (id = layouts.size));
        layoutCols.push(Array.from(pCol.subarray(0, placed)));
      }
      bySet.set(set, id);
    }
    layoutIds[i] = id;
    if (pieces !== undefined && clean) {
      pieces.clean[i] = 1;
      // Gaps mostly repeat the previous event's: a string compare is cheaper than a Set lookup
      // (only against a clean previous event: an unclean one's gaps were not added).
      const prevClean = i > 0 && pieces.clean[i - 1] === 1;
      for (let q = 0; q <= placed; q++) {
        const g = gaps[q]![i]!;
        if (!prevClean || g !== gaps[q]![i - 1]) pieces.gaps.add(g);
      }
      if (cleanLayouts[id] !== 1) {
        cleanLayouts[id] = 1;
        for (let q = 0; q < placed; q++) pieces.columns.add(pCol[q]!);
      }
    }
  }
  if (covered < total * MIN_TEMPLATE_COVER) return null;
  const t = [...layouts.keys()].map((k) => {
    const cols = new Array<number>(k.length);
    for (let q = 0; q < k.length; q++) cols[q] = k.charCodeAt(q) - 1;
    return cols;
  });
  return { e: 't', t, li: encodeNumbers(layoutIds), g: gaps.map((g) => encodeStrings(g, count)) };
}

/**
 * Decodes the raw strings. Template-encoded ones need the block's field columns: `field(j)` gives
 * the decoded j-th column of the body (which must not itself refer to the raw strings).
 */
export function decodeRaw(c: RawColumn, count: number, field?: (j: number) => readonly (string | null | undefined)[]): string[] {
  if (c.e === 't') {
    if (field === undefined) throw new LogsvcError('E_INTERNAL', 'template-encoded raw strings need the field columns');
    return decodeTemplate(c, count, field);
  }
  const lengths = decodeNumbers(c.l, count);
  const buf = Buffer.from(c.b.buffer, c.b.byteOffset, c.b.byteLength);
  const out = new Array<string>(count);
  let pos = 0;
  for (let i = 0; i < count; i++) {
    const end = pos + lengths[i]!;
    if (end > buf.length) throw new LogsvcError('E_STATE_CORRUPT', 'raw column is shorter than its lengths say');
    out[i] = buf.toString('utf8', pos, end);
    pos = end;
  }
  return out;
}

function decodeTemplate(c: TemplateRaw, count: number, field: (j: number) => readonly (string | null | undefined)[]): string[] {
  const ids = decodeNumbers(c.li, count);
  const gaps = c.g.map((g) => decodeStrings(g, count));
  const cols = new Map<number, readonly (string | null | undefined)[]>();
  const out = new Array<string>(count);
  // Concatenated (a per-event join measured 1.4x slower, and one join of the whole block sliced
  // per event 2x slower, including the first search of each event).
  for (let i = 0; i < count; i++) {
    const layout = c.t[ids[i]!];
    if (layout === undefined || gaps.length <= layout.length) throw new LogsvcError('E_STATE_CORRUPT', `raw template: event ${i} has no layout ${ids[i]}`);
    let s = '';
    for (let k = 0; ; k++) {
      const g = gaps[k]![i];
      if (g === null || g === undefined) throw new LogsvcError('E_STATE_CORRUPT', `raw template: event ${i} lacks gap ${k}`);
      s += g;
      if (k === layout.length) break;
      const j = layout[k]!;
      let col = cols.get(j);
      if (col === undefined) cols.set(j, (col = field(j)));
      const v = col[i];
      if (v === null || v === undefined) throw new LogsvcError('E_STATE_CORRUPT', `raw template: event ${i} lacks the value of field column ${j}`);
      s += v;
    }
    out[i] = s;
  }
  return out;
}
