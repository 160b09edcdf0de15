/**
 * Events of one block as the query engine reads them: columns decoded lazily, on the first read of
 * each (a `count()` never decodes @rawstring; a filter on `status` decodes only that column), and
 * `ColumnEvent`, the `Ev` over one row of a block with an overlay for what the pipeline sets.
 */
import type { SeenBytes } from './seen-bytes.js';
import type { TemplateHeadSlot } from './template-heads.js';
import type { KeptIntColumns } from './kept-ints.js';
import { eventId } from '../events/index.js';
import { LogsvcError } from '../lib/errors.js';
import { unpack } from '../lib/msgpack.js';
import { emptyColumns, type BlockBody, type BlockColumns } from '../segments/block.js';
import { decodeNumbers, decodeStrings, numberRows, type NumberColumn, type StringColumn } from '../segments/columns.js';
import { decodeRaw } from '../segments/raw-columns.js';
import { rawRows, stringRows, templateRowsOf, type RowReader } from '../segments/column-rows.js';
import { columnFromBytes, readRows, templateFromBytes, type ColumnRead, type TemplateRead } from './text-bytes.js';
import { bodyColumns, wholeBody, type EncodedBlock } from '../segments/frames.js';
import { chargeMade } from './memory.js';
import type { Ev } from './runtime.js';

/** Where a block's events come from: its repository name, partition and datasource tags. */
export interface BlockOrigin {
  repoName: string;
  partition: number;
  /** Tag names without `#`. */
  tags: Readonly<Record<string, string>>;
}

/** Columns a view reading few rows read in place from their bytes: dictionaries and templated raw strings (tests check both happen). */
export const readInPlace = { dicts: 0, templates: 0 };

export class BlockView {
  readonly n: number;
  /** The block's encoded columns (format 5: each read from its frame on first use); null in memory. */
  private readonly enc: EncodedBlock | null;
  private tsCol: number[] | null = null;
  private tzCol: (string | null)[] | null = null;
  private rawCol: string[] | null = null;
  private itCol: number[] | null = null;
  private offCol: number[] | null = null;
  private idxCol: number[] | null = null;
  private idsCol: number[] | null = null;
  /** Stored field names in body order (a name's column: its last occurrence, should one repeat). */
  private readonly encNames: readonly string[];
  /** Decoded field columns by column number (templates refer to them so). */
  private readonly fieldAt: ((string | null)[] | undefined)[] = [];
  private readonly fieldCols = new Map<string, readonly (string | null | undefined)[]>();
  /** `#name` -> value. */
  readonly tagFields: Map<string, string>;
  /** Few rows will be read (readFew): columns not decoded yet are read row by row. */
  private few = false;
  /** The byte values of this block's text columns seen by earlier searches (seen-bytes.ts; scan.ts sets it for stored blocks). */
  seen: SeenBytes | null = null;
  /** This block's integer columns kept decoded by earlier ranges (kept-ints.ts; scan.ts sets it for stored blocks read frame by frame). */
  keptInts: KeptIntColumns | null = null;
  /** This block's raw template head kept by earlier searches, or where to keep it (template-heads.ts; scan.ts sets it for text searches of stored blocks). */
  templateHead: TemplateHeadSlot | null = null;
  /** Row readers by field column number, and of the raw strings (readFew). */
  private readonly rowsAt: (RowReader | undefined)[] = [];
  private rawRow: ((i: number) => string) | null = null;
  /** Field columns read from their bytes (columnRead), by column number; null: no bytes. */
  private readonly readAt: (ColumnRead | null | undefined)[] = [];
  /** The templated raw column read from its bytes (rawTemplate); null: none; undefined: not asked yet. */
  private tplRead: TemplateRead | null | undefined = undefined;

  private constructor(
    readonly origin: BlockOrigin,
    n: number,
    enc: EncodedBlock | null,
  ) {
    this.n = n;
    this.enc = enc;
    this.encNames = enc?.names ?? [];
    this.tagFields = tagFieldsOf(origin);
  }

  /** From a decompressed block body of formats 1 to 4 (a whole msgpack body map). */
  static fromBody(body: Buffer, origin: BlockOrigin): BlockView {
    return BlockView.fromEncoded(bodyColumns(unpack(body) as BlockBody), origin);
  }

  /** From a block's encoded columns, any format (segments/block.ts encodedBlockAt; scan.ts for reads of single columns). */
  static fromEncoded(enc: EncodedBlock, origin: BlockOrigin): BlockView {
    return new BlockView(origin, enc.n, enc);
  }

  /** From columns built in memory (blocks the digest has not written yet). */
  static fromColumns(c: BlockColumns, origin: BlockOrigin): BlockView {
    const v = new BlockView(origin, c.count, null);
    v.tsCol = c.ts;
    v.tzCol = c.tz;
    v.rawCol = c.raw;
    v.itCol = c.it;
    v.offCol = c.off;
    v.idxCol = c.idx;
    for (const [name, col] of c.fields) v.fieldCols.set(name, col);
    return v;
  }

  /**
   * The rows at queue offsets below `offset` (a live query's boundary cuts a block there): this
   * view when every row is, else a view of those rows built in memory (every column decoded; only
   * the block a boundary falls in takes this).
   */
  below(offset: number): BlockView {
    const off = this.off();
    const keep: number[] = [];
    for (let i = 0; i < this.n; i++) if (off[i]! < offset) keep.push(i);
    if (keep.length === this.n) return this;
    const c = emptyColumns();
    const ts = this.ts();
    const tz = this.tz();
    const raw = this.raw();
    const it = this.it();
    const idx = this.idx();
    for (const i of keep) {
      c.ts.push(ts[i]!);
      c.tz.push(tz[i] as string);
      c.raw.push(raw[i]!);
      c.it.push(it[i]!);
      c.off.push(off[i]!);
      c.idx.push(idx[i]!);
    }
    c.count = keep.length;
    for (const name of this.fieldNames()) {
      const col = this.field(name);
      if (col === null) continue;
      c.fields.set(name, keep.map((i) => col[i] ?? undefined));
    }
    return BlockView.fromColumns(c, this.origin);
  }

  ts(): number[] {
    return (this.tsCol ??= decodeNumbers(this.enc!.builtin('ts'), this.n));
  }
  raw(): string[] {
    if (this.rawCol !== null) return this.rawCol;
    const enc = this.enc!;
    // Template-encoded raw strings are built from the field columns (decoded once, shared with field()).
    this.rawCol = decodeRaw(enc.builtin('raw'), this.n, (j) => this.columnAt(j));
    return this.rawCol;
  }
  private tz(): (string | null)[] {
    return (this.tzCol ??= decodeStrings(this.enc!.builtin('tz'), this.n));
  }
  private it(): number[] {
    return (this.itCol ??= decodeNumbers(this.enc!.builtin('it'), this.n));
  }
  off(): number[] {
    return (this.offCol ??= decodeNumbers(this.enc!.builtin('off'), this.n));
  }
  idx(): number[] {
    return (this.idxCol ??= decodeNumbers(this.enc!.builtin('idx'), this.n));
  }

  /**
   * Row i of a built-in number column: from the decoded column, or after readFew() (and none
   * decoded) row by row (columns.ts numberRows), the reader made once per column.
   */
  private builtinAt(name: 'ts' | 'it' | 'off' | 'idx', decoded: number[] | null, i: number): number {
    if (decoded !== null || !this.few) return (decoded ?? this[name]())[i]!;
    let rows = this.builtinRows.get(name);
    if (rows === undefined) this.builtinRows.set(name, (rows = numberRows(this.enc!.builtin(name), this.n)));
    return rows(i);
  }
  private readonly builtinRows = new Map<string, (i: number) => number>();

  /** Row i's timestamp (read row by row after readFew()). */
  tsAt(i: number): number {
    return this.builtinAt('ts', this.tsCol, i);
  }

  /** Row i's time zone (null: none), row by row after readFew(). */
  private tzAt(i: number): string | null | undefined {
    if (this.tzCol !== null || !this.few) return this.tz()[i];
    return (this.tzRow ??= stringRows(this.enc!.builtin('tz'), this.n))(i);
  }
  private tzRow: RowReader | null = null;

  /**
   * Few of this block's rows will be read (a selective filter kept them): what no one has decoded
   * yet is then read row by row (segments/column-rows.ts), not column by column. A rare token's
   * matches spent ~60 % of the scan decoding the rest of their blocks (docs/benchmarks.md, 2026-11-28).
   */
  readFew(): void {
    this.few = this.enc !== null;
  }

  /** Whether few rows will be read (readFew): columns not decoded yet are read row by row. */
  readsFew(): boolean {
    return this.few;
  }

  /** Row i's raw string: from the decoded column, or row by row after readFew(). */
  private rawOf(i: number): string | undefined {
    if (this.rawCol !== null || !this.few) return this.raw()[i];
    return (this.rawRow ??= this.templateRows() ?? rawRows(this.enc!.builtin('raw'), this.n, (j) => this.rowsOf(j)))(i);
  }

  /**
   * A templated raw column row by row from its bytes (formats 5 and 6): its gap dictionaries read
   * in place, not every entry of every gap decoded for a few rows (~0.45 ms a JSON block); null
   * for other blocks.
   */
  private templateRows(): ((i: number) => string) | null {
    const tpl = this.enc!.encoding('raw') === 't' ? this.rawTemplate() : null;
    if (tpl === null) return null;
    readInPlace.templates++;
    return templateRowsOf(
      tpl.layouts,
      tpl.ids(),
      tpl.gaps.map((g) => readRows(g, this.n)),
      (j) => this.rowsOf(j),
    );
  }

  /** Field column j of the body row by row (its decoded column when there is one). */
  private rowsOf(j: number): RowReader {
    const got = this.rowsAt[j];
    if (got !== undefined) return got;
    const decoded = this.fieldAt[j];
    if (decoded !== undefined) return (i) => decoded[i] ?? null;
    // A dictionary read in place from its bytes (formats 5 and 6): its entries become strings only for the rows asked.
    const read = this.enc!.encoding(j) === 'k' ? this.columnReadAt(j) : null;
    let rows: RowReader;
    if (read?.dict !== undefined) {
      readInPlace.dicts++;
      rows = readRows(read, this.n);
    } else {
      const col = this.encodedColumn(j);
      rows = stringRows(col, this.n, col.e === 'x' ? (i) => this.rawOf(i) ?? null : undefined);
    }
    this.rowsAt[j] = rows;
    return rows;
  }

  /** Field column j of the body, encoded (checked against the raw strings' encoding). */
  private encodedColumn(j: number): StringColumn {
    const enc = this.enc!;
    if (j < 0 || j >= enc.names.length) throw new LogsvcError('E_STATE_CORRUPT', `raw template refers to field column ${j}, the block has ${enc.names.length}`);
    const col = enc.field(j);
    if (col.e === 'x' && enc.encoding('raw') === 't') throw new LogsvcError('E_STATE_CORRUPT', `field column ${JSON.stringify(enc.names[j])} refers to raw strings that are built from the field columns`);
    return col;
  }

  /** A stored field's value in row i (null or undefined: none), read row by row after readFew(). */
  storedValue(name: string, i: number): string | null | undefined {
    const got = this.fieldCols.get(name);
    if (got !== undefined) return got[i];
    if (!this.few) return this.field(name)?.[i];
    const j = this.fieldNumber(name);
    return j < 0 ? undefined : this.rowsOf(j)(i);
  }

  /** A stored field's column number (its last occurrence, should a name repeat); -1: none. */
  private fieldNumber(name: string): number {
    return this.enc?.fieldNumber?.(name) ?? this.encNames.lastIndexOf(name);
  }

  /** Field column j of the body, decoded (once). */
  private columnAt(j: number): (string | null)[] {
    const got = this.fieldAt[j];
    if (got !== undefined) return got;
    const col = this.encodedColumn(j);
    const out = decodeStrings(col, this.n, col.e === 'x' ? this.raw() : undefined);
    this.fieldAt[j] = out;
    return out;
  }

  /** A stored field's column, or null when no event of the block has it. */
  field(name: string): readonly (string | null | undefined)[] | null {
    const got = this.fieldCols.get(name);
    if (got !== undefined) return got;
    const j = this.fieldNumber(name);
    if (j < 0) return null;
    const col = this.columnAt(j);
    this.fieldCols.set(name, col);
    return col;
  }

  /** The encoded column of a stored field when its encoding is `e` (known without reading it in format 5). */
  private encodedAs<E extends StringColumn['e']>(name: string, e: E): Extract<StringColumn, { e: E }> | null {
    const j = this.fieldNumber(name);
    if (j < 0 || this.enc!.encoding(j) !== e) return null;
    const col = this.enc!.field(j);
    return col.e === e ? (col as Extract<StringColumn, { e: E }>) : null;
  }

  /**
   * A dictionary-encoded stored field: its entries and one code per row (`absent` where a row lacks
   * it), so a filter or a tally can look at each distinct value once. Null for other encodings.
   */
  /**
   * A dictionary field's entries when the block's head holds them (format 6 summaries), without
   * reading the column's frame; null otherwise (then `dict` reads them).
   */
  dictEntries(name: string): readonly string[] | null {
    const j = this.fieldNumber(name);
    if (j < 0 || this.enc === null || this.enc.encoding(j) !== 'k') return null;
    return this.enc.headEntries?.(j) ?? null;
  }

  dict(name: string): { d: readonly string[]; codes: Uint8Array | Uint16Array; absent: number } | null {
    const enc = this.encodedAs(name, 'k');
    if (enc === null) return null;
    const i = enc.i;
    if (i.byteLength !== this.n * enc.w) throw new LogsvcError('E_STATE_CORRUPT', 'dictionary column has the wrong length');
    if (enc.w === 1) return { d: enc.d, codes: i, absent: 255 };
    // Little-endian u16 codes: a view when aligned on a little-endian machine, else a copy.
    if (LITTLE_ENDIAN && i.byteOffset % 2 === 0) return { d: enc.d, codes: new Uint16Array(i.buffer, i.byteOffset, this.n), absent: 65535 };
    const codes = new Uint16Array(this.n);
    const dv = new DataView(i.buffer, i.byteOffset, i.byteLength);
    for (let k = 0; k < this.n; k++) codes[k] = dv.getUint16(k * 2, true);
    return { d: enc.d, codes, absent: 65535 };
  }

  /** How a stored field's column is encoded (columns.ts StringColumn `e`); null for blocks in memory. */
  encoding(name: string): StringColumn['e'] | null {
    const j = this.fieldNumber(name);
    return j < 0 ? null : ((this.enc!.encoding(j) as StringColumn['e'] | '') || null);
  }

  /**
   * The template of a block whose raw strings are stored as templates over its field columns
   * (columns.ts TemplateRaw): the layouts (field column numbers in raw order), each row's layout,
   * the gap columns and the field names by column number. Null for other blocks.
   */
  template(): { layouts: readonly (readonly number[])[]; gaps: readonly StringColumn[]; names: readonly string[] } | null {
    const enc = this.enc;
    if (enc === null || enc.encoding('raw') !== 't') return null;
    const raw = enc.builtin('raw');
    if (raw.e !== 't') return null;
    return { layouts: raw.t, gaps: raw.g, names: enc.names };
  }

  /** Each row's layout number in a templated block (see `template`), decoded once. */
  layoutIds(): readonly number[] {
    if (this.idsCol !== null) return this.idsCol;
    const raw = this.enc?.builtin('raw');
    if (raw?.e !== 't') throw new LogsvcError('E_INTERNAL', 'layout numbers of a block whose raw strings are not templates');
    return (this.idsCol = decodeNumbers(raw.li, this.n));
  }

  /** A stored field's column when it is one UTF-8 run of its values (columns.ts `encodeText`); null otherwise. */
  utf8(name: string): { b: Uint8Array; l: Uint8Array } | null {
    return this.encodedAs(name, 'u');
  }

  /**
   * A stored field's column (by name) or a built-in one as its msgpack, undecoded (formats 5 and
   * 6), for text search to walk itself (text-bytes.ts); null for other blocks, unknown fields and a
   * format 6 dictionary whose entries are in the head's summary (EncodedBlock.bytes).
   */
  columnBytes(col: string | { builtin: 'raw' }): Buffer | null {
    const enc = this.enc;
    if (enc === null) return null;
    if (typeof col !== 'string') return enc.bytes(col.builtin);
    const j = this.fieldNumber(col);
    return j < 0 ? null : enc.bytes(j);
  }

  /**
   * A stored field's column from its bytes (text-bytes.ts columnFromBytes: a dictionary's entries
   * in place), read once for both text search and the rows it keeps; null where columnBytes is.
   */
  columnRead(name: string): ColumnRead | null {
    const j = this.fieldNumber(name);
    return j < 0 ? null : this.columnReadAt(j);
  }

  private columnReadAt(j: number): ColumnRead | null {
    const got = this.readAt[j];
    if (got !== undefined) return got;
    const bytes = this.enc === null ? null : this.enc.bytes(j);
    return (this.readAt[j] = bytes === null ? null : columnFromBytes(bytes, this.n));
  }

  /** The templated raw column from its bytes (text-bytes.ts templateFromBytes), read once; null for other blocks and formats. */
  rawTemplate(): TemplateRead | null {
    if (this.tplRead !== undefined) return this.tplRead;
    const bytes = this.columnBytes({ builtin: 'raw' });
    const tpl = bytes === null ? null : templateFromBytes(bytes, this.n);
    if (tpl !== null) {
      // Each row's layout number decoded once, whoever asks first.
      const decode = tpl.ids;
      let ids: number[] | null = null;
      tpl.ids = () => (ids ??= decode());
    }
    return (this.tplRead = tpl);
  }

  /** The raw strings when stored as one UTF-8 run with their byte lengths (columns.ts `encodeRaw`); null otherwise. */
  rawUtf8(): { b: Uint8Array; l: NumberColumn } | null {
    const enc = this.enc;
    if (enc === null || enc.encoding('raw') !== 'j') return null;
    const raw = enc.builtin('raw');
    return raw.e === 'j' ? raw : null;
  }

  /** An IPv4-typed stored field (every row holds one): four bytes per row; null for other encodings. */
  ipv4(name: string): Uint8Array | null {
    const enc = this.encodedAs(name, '4');
    if (enc === null) return null;
    if (enc.b.length !== this.n * 4) throw new LogsvcError('E_STATE_CORRUPT', 'IPv4 column has the wrong length');
    return enc.b;
  }

  /** A stored field's text column as stored (`{e: "u"}`: one UTF-8 run and a length per row); null for other encodings. */
  textRun(name: string): { b: Uint8Array; l: Uint8Array } | null {
    return this.encodedAs(name, 'u');
  }

  /** An integer-typed stored field (every row holds one) as numbers; null for other encodings. */
  ints(name: string): readonly number[] | null {
    const enc = this.encodedAs(name, 'i');
    if (enc === null) return null;
    return decodeNumbers(enc.v, this.n);
  }

  /** An integer-typed stored field's numbers, encoded (columns.ts NumberColumn); null for other encodings. */
  intColumn(name: string): NumberColumn | null {
    return this.encodedAs(name, 'i')?.v ?? null;
  }

  /** The stored fields' names in body order, a repeated one as often as it repeats (templates refer to fields by this position). */
  columnNames(): readonly string[] {
    return this.enc === null ? [...this.fieldCols.keys()] : this.encNames;
  }

  /** The stored fields' names, each once (made once per view: names() asks for them per row). */
  fieldNames(): readonly string[] {
    return (this.namesOnce ??= this.enc === null ? [...this.fieldCols.keys()] : [...new Set(this.encNames)]);
  }
  private namesOnce: readonly string[] | null = null;

  /** The value of `name` for row `i` as the query language sees it. */
  get(name: string, i: number): string | undefined {
    switch (name) {
      case '@timestamp':
        return String(this.tsAt(i));
      case '@rawstring':
        return this.rawOf(i);
      case '@timezone':
        return this.tzAt(i) ?? 'Z';
      case '@ingesttimestamp':
        return String(this.builtinAt('it', this.itCol, i));
      case '@id':
        return eventId(this.origin.partition, this.builtinAt('off', this.offCol, i), this.builtinAt('idx', this.idxCol, i), this.tsAt(i));
      case '#repo':
        return this.origin.repoName;
      default:
        if (name.charCodeAt(0) === 35 /* # */) {
          const t = this.tagFields.get(name);
          if (t !== undefined) return t;
        }
        return this.storedValue(name, i) ?? undefined;
    }
  }

  /**
   * Every row's fields as plain data, made once per view: what `names(i)` and `get(name, i)` give,
   * read back with `rowFlat`. For aggregates that keep rows without copying each one (the columns
   * are shared; selfJoinFilter): plain arrays, so a state holding them can cross threads. Null when
   * a stored field shadows a built-in name (then only names()/get() say what the row shows).
   */
  rowColumns(): RowColumns | null {
    if (this.rowColsOnce !== undefined) return this.rowColsOnce;
    if (!this.rowsPlain()) return (this.rowColsOnce = null);
    const fields = this.fieldNames().filter((f) => !this.tagFields.has(f));
    const tags = [...this.tagFields.keys()];
    const ts = this.ts();
    const cols: RowCol[] = [
      { n: ts },
      { s: this.raw() },
      { p: this.origin.partition, off: this.off(), idx: this.idx(), ts },
      { s: this.tz(), d: 'Z' },
      { n: this.it() },
      { c: this.origin.repoName },
      ...tags.map((t) => ({ c: t === '#repo' ? this.origin.repoName : this.tagFields.get(t)! })),
      ...fields.map((f) => ({ s: this.field(f) ?? [] })),
    ];
    const names = ['@timestamp', '@rawstring', '@id', '@timezone', '@ingesttimestamp', '#repo', ...tags, ...fields];
    return (this.rowColsOnce = { n: this.n, names, cols });
  }
  private rowColsOnce: RowColumns | null | undefined = undefined;

  /** False when a stored field shadows a built-in name (rowColumns() is then null); decodes nothing. */
  rowsPlain(): boolean {
    return !this.fieldNames().some((f) => !this.tagFields.has(f) && BUILTIN_NAMES.has(f));
  }

  /**
   * The block's columns as stored (every frame read, no value decoded), as one plain body that
   * `BlockView.fromEncoded(bodyColumns(body), origin)` reads as this view: for aggregates that keep
   * rows of which they will read few (selfJoinFilter keeps every row until the keys that qualify
   * are known). Plain data, so a state holding it can cross threads; a column that is a view into
   * a much larger buffer (a frame stored as is, sliced from a file read) is copied, so the state
   * does not hold or carry the rest. Null for a block in memory (its columns are decoded already).
   */
  encodedBody(): BlockBody | null {
    if (this.bodyOnce !== undefined) return this.bodyOnce;
    return (this.bodyOnce = this.enc === null ? null : (detached(wholeBody(this.enc)) as BlockBody));
  }
  private bodyOnce: BlockBody | null | undefined = undefined;

  /** Every name row `i` has, built-ins first. */
  names(i: number): string[] {
    const out = ['@timestamp', '@rawstring', '@id', '@timezone', '@ingesttimestamp', '#repo', ...this.tagFields.keys()];
    for (const name of this.fieldNames()) {
      if (this.tagFields.has(name)) continue;
      const v = this.storedValue(name, i);
      if (v !== null && v !== undefined) out.push(name);
    }
    return out;
  }
}

/** Bytes past a view's own that a kept view may hold of its buffer before it is copied out (encodedBody). */
const SLACK_BYTES = 64 * 1024;

/** `x` with every typed array that is a small view into a large buffer copied; the rest as it is. */
function detached(x: unknown): unknown {
  if (ArrayBuffer.isView(x)) {
    const v = x as Uint8Array;
    // Uint8Array's slice copies (a Buffer's own slice() would be another view of the same memory).
    return v.buffer.byteLength > 2 * v.byteLength + SLACK_BYTES ? Uint8Array.prototype.slice.call(v) : v;
  }
  if (Array.isArray(x)) {
    // Arrays of strings or numbers only (dictionary entries) hold no buffers: left as they are.
    return x.some((y) => y !== null && typeof y === 'object') ? x.map(detached) : x;
  }
  if (x !== null && typeof x === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(x)) out[k] = detached(v);
    return out;
  }
  return x;
}

/** The names get() answers before looking at stored fields. */
const BUILTIN_NAMES = new Set(['@timestamp', '@rawstring', '@timezone', '@ingesttimestamp', '@id', '#repo']);

/** How one name's value is read for a row (BlockView.rowColumns). */
export type RowCol =
  /** The same for every row (#repo, tags). */
  | { c: string }
  /** A column (null or undefined: the row has no value), `d` where it has none (@timezone). */
  | { s: readonly (string | null | undefined)[]; d?: string }
  /** Numbers, shown as decimal text (@timestamp, @ingesttimestamp). */
  | { n: readonly number[] }
  /** @id, made from the partition, offset, index and timestamp (events/event-id.ts). */
  | { p: number; off: readonly number[]; idx: readonly number[]; ts: readonly number[] };

/** A block's rows as plain data: the names in names() order and how each is read. */
export interface RowColumns {
  n: number;
  names: string[];
  cols: RowCol[];
}

/** Row `i` as one flat array `[name, value, name, value, ...]`: the names and values names() and get() give. */
export function rowFlat(rc: RowColumns, i: number): string[] {
  const out: string[] = [];
  const { names, cols } = rc;
  for (let j = 0; j < cols.length; j++) {
    const col = cols[j]!;
    let v: string | undefined;
    if ('c' in col) v = col.c;
    else if ('s' in col) v = col.s[i] ?? col.d;
    else if ('n' in col) v = String(col.n[i]);
    else v = eventId(col.p, col.off[i]!, col.idx[i]!, col.ts[i]!);
    if (v !== undefined) out.push(names[j]!, v);
  }
  return out;
}

/** `#name` -> value of an origin's tags, made once per origin (a scan task's blocks of one unit share it). */
const tagFieldsMade = new WeakMap<BlockOrigin, Map<string, string>>();
function tagFieldsOf(origin: BlockOrigin): Map<string, string> {
  let m = tagFieldsMade.get(origin);
  if (m === undefined) tagFieldsMade.set(origin, (m = new Map(Object.entries(origin.tags).map(([k, v]) => [`#${k}`, v] as const))));
  return m;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

const REMOVED = Symbol('removed');

/** One row of a block; what the pipeline sets or removes lives in an overlay. */
export class ColumnEvent implements Ev {
  private overlay: Map<string, string | typeof REMOVED> | null = null;
  /** After keepOnly(): the stored fields that remain (others read as absent); null: all. */
  private only: ReadonlySet<string> | null = null;

  constructor(
    private readonly view: BlockView,
    private readonly row: number,
  ) {}

  get(name: string): string | undefined {
    if (this.overlay !== null) {
      const o = this.overlay.get(name);
      if (o !== undefined) return o === REMOVED ? undefined : o;
    }
    if (this.only !== null && !this.only.has(name)) return undefined;
    return this.view.get(name, this.row);
  }
  set(name: string, value: string): void {
    chargeMade(value.length);
    (this.overlay ??= new Map()).set(name, value);
  }
  remove(name: string): void {
    (this.overlay ??= new Map()).set(name, REMOVED);
  }
  has(name: string): boolean {
    return this.get(name) !== undefined;
  }
  keepOnly(names: ReadonlySet<string>): void {
    // Values set and not kept go; stored fields not kept read as absent, so no column is decoded
    // to find out which fields the row has.
    if (this.overlay !== null) for (const n of [...this.overlay.keys()]) if (!names.has(n)) this.overlay.delete(n);
    const was = this.only;
    this.only = was === null ? names : new Set([...names].filter((n) => was.has(n)));
  }
  names(): string[] {
    const only = this.only;
    const base = only === null ? this.view.names(this.row) : [...only].filter((n) => this.view.get(n, this.row) !== undefined);
    if (this.overlay === null) return base;
    const out = base.filter((n) => this.overlay!.get(n) !== REMOVED);
    const seen = new Set(out);
    for (const [n, v] of this.overlay) if (v !== REMOVED && !seen.has(n)) out.push(n);
    return out;
  }
  /** The row's stored fields (not the overlay): what free text searches (query-functions.md §2.2). */
  *storedFields(): Iterable<[string, string]> {
    const view = this.view;
    for (const name of view.fieldNames()) {
      const v = view.storedValue(name, this.row);
      if (v !== null && v !== undefined) yield [name, v];
    }
  }
  timestamp(): number {
    if (this.overlay?.has('@timestamp') === true || (this.only !== null && !this.only.has('@timestamp'))) {
      const v = this.get('@timestamp');
      return v === undefined ? Number.NaN : Number(v);
    }
    return this.view.tsAt(this.row);
  }
  /** The block when the row reads as stored (nothing set, removed or dropped); else null. Its row: `rowIndex`. */
  storedView(): BlockView | null {
    return this.overlay === null && this.only === null ? this.view : null;
  }
  get rowIndex(): number {
    return this.row;
  }
  clone(): Ev {
    const c = new ColumnEvent(this.view, this.row);
    if (this.overlay !== null) c.overlay = new Map(this.overlay);
    c.only = this.only;
    return c;
  }
}
