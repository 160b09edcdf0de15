/**
 * Turning an uploaded file's bytes into rows (csv-parse's and @streamparser/json's one home). CSV as the product reads it: the
 * first row names the columns, values are comma separated, whitespace is kept in names and values,
 * a value holding a comma is quoted with double quotes. JSON in the two shapes the product takes: an
 * object keyed by the lookup value whose values are flat objects (the key column has no name), or an
 * array of flat objects (the key column is picked by the query). Every problem is an E_VALIDATION
 * naming the line, row or member.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { createRequire } from 'node:module';
import type { Options as CsvOptions } from 'csv-parse';
import { lazyRequire } from '../lib/lazy-require.js';
import { LogsvcError } from '../lib/errors.js';
import type { FileKind } from './names.js';

/**
 * The CSV and JSON parsers (csv-parse, @streamparser/json: about 20 modules) are loaded at first
 * use, synchronously from their CommonJS builds: a node that reads no lookup file never holds them.
 */
const req = createRequire(import.meta.url);
const csvStreamLib = lazyRequire<typeof import('csv-parse')>(req, 'csv-parse');
const csvSyncLib = lazyRequire<typeof import('csv-parse/sync')>(req, 'csv-parse/sync');
const jsonLib = lazyRequire<typeof import('@streamparser/json')>(req, '@streamparser/json');
const parseCsv: (typeof import('csv-parse/sync'))['parse'] = (...a: Parameters<(typeof import('csv-parse/sync'))['parse']>) => csvSyncLib().parse(...a);

/** Columns one file may have. */
export const MAX_COLUMNS = 1000;
/** Characters one CSV record may have (csv-parse's guard against a wrong quote running to the end). */
const MAX_RECORD_CHARS = 1024 * 1024;
/**
 * Cells (rows x columns) a table may have per byte of its file. A packed cell costs 5 bytes plus its
 * text, and a sparse JSON file (a thousand rows each naming a new member, then thousands of `{}`)
 * would otherwise turn 24 KB into 5 million cells. A CSV file needs at least one byte per cell (its
 * comma or line end), a dense JSON file several, so real files stay far below this.
 */
export const MAX_CELLS_PER_FILE_BYTE = 4;
/** Cells any file may have regardless of its size (small sparse files stay usable): 5 MB packed. */
export const MIN_CELL_ALLOWANCE = 1 << 20;
/** Cells no file may exceed (320 MB of offsets and flags before any text). */
export const MAX_CELLS = 64 * 1024 * 1024;

/** The cells a file of `bytes` bytes may have. */
export function cellLimit(bytes: number): number {
  return Math.min(MAX_CELLS, Math.max(MIN_CELL_ALLOWANCE, bytes * MAX_CELLS_PER_FILE_BYTE));
}

/** Refuses a table whose rows x columns is over the cell limit, before anything that size is built. */
export function checkCells(rows: number, columns: number, bytes: number): void {
  const limit = cellLimit(bytes);
  if (rows * columns > limit) {
    throw new LogsvcError(
      'E_BODY_TOO_LARGE',
      `the file has ${rows} rows of ${columns} columns (${rows * columns} cells), more than the ${limit} cells a file of ${bytes} bytes may have (${MAX_CELLS_PER_FILE_BYTE} per byte, at least ${MIN_CELL_ALLOWANCE}, at most ${MAX_CELLS}); a JSON file whose objects name many different members is very sparse`,
    );
  }
}

export interface ParsedTable {
  /** Column names; the key column of a keyed JSON object is named "" (it has no name). */
  columns: string[];
  /**
   * Row-major cells; null (or missing, past the end of a shorter row) where a JSON row has no such
   * member. JSON rows are not padded to the column count: packing reads missing cells as absent.
   */
  rows: (string | null)[][];
  /** The index of the unnamed key column (keyed JSON objects), else null. */
  keyColumn: number | null;
}

export interface ParseLimits {
  maxRows: number;
}

export function tooMany(rows: number, limits: ParseLimits): LogsvcError {
  return new LogsvcError('E_VALIDATION', `the file has ${rows} or more rows, more than the limit of ${limits.maxRows} (files.max_rows)`);
}

export function parseTable(bytes: Uint8Array, kind: FileKind, limits: ParseLimits): ParsedTable {
  return kind === 'csv' ? csvTable(bytes, limits) : jsonTable(bytes, limits);
}

/** CSV as the product reads it (see the module comment). */
const CSV_OPTIONS: CsvOptions = { bom: true, delimiter: ',', quote: '"', trim: false, skip_empty_lines: true, relax_column_count: false, max_record_size: MAX_RECORD_CHARS };

function csvError(err: unknown): LogsvcError {
  return new LogsvcError('E_VALIDATION', `the CSV file cannot be read: ${(err as Error).message.replace(/\s+/g, ' ').slice(0, 300)}`);
}

function csvTable(bytes: Uint8Array, limits: ParseLimits): ParsedTable {
  let records: string[][];
  try {
    // One record past the limit tells us the file is too long without reading all of it.
    records = parseCsv(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { ...CSV_OPTIONS, to: limits.maxRows + 2 });
  } catch (err) {
    throw csvError(err);
  }
  const header = records[0];
  if (header === undefined) throw new LogsvcError('E_VALIDATION', 'the CSV file is empty; its first row must name the columns');
  checkColumns(header);
  if (records.length - 1 > limits.maxRows) throw tooMany(records.length - 1, limits);
  checkCells(records.length - 1, header.length, bytes.byteLength);
  return { columns: header, rows: records.slice(1), keyColumn: null };
}

/** Bytes read from a file or buffer at a time by csvRecords. */
const READ_CHUNK_BYTES = 1024 * 1024;

/** Where a CSV file is: its bytes in memory, or a file on disk. */
export type CsvSource = Uint8Array | { path: string };

function chunksOf(bytes: Uint8Array): Readable {
  return Readable.from(
    (function* () {
      for (let at = 0; at < bytes.byteLength; at += READ_CHUNK_BYTES) yield Buffer.from(bytes.buffer, bytes.byteOffset + at, Math.min(READ_CHUNK_BYTES, bytes.byteLength - at));
    })(),
    { objectMode: false },
  );
}

/**
 * The records of a CSV file one at a time (csv-parse's stream API), the header first, read from
 * disk or memory a megabyte at a time: memory follows one record, not the file. Stopping the
 * iteration early (a bound passed) stops reading. Errors are E_VALIDATION naming the problem.
 */
export async function* csvRecords(source: CsvSource): AsyncGenerator<string[]> {
  const input = source instanceof Uint8Array ? chunksOf(source) : createReadStream(source.path, { highWaterMark: READ_CHUNK_BYTES });
  const parser = csvStreamLib().parse(CSV_OPTIONS);
  input.on('error', (err: Error) => parser.destroy(err));
  input.pipe(parser);
  try {
    for await (const record of parser as AsyncIterable<string[]>) yield record;
  } catch (err) {
    if (err instanceof LogsvcError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new LogsvcError('E_UNAVAILABLE', 'a lookup file was replaced or removed while it was being read; retry');
    throw csvError(err);
  } finally {
    input.unpipe(parser);
    input.destroy();
    parser.destroy();
  }
}

/**
 * Refuses a CSV file whose header row has too many columns from its first record alone, before
 * the whole file is parsed (issue 24: a 2,000-column file used to be refused only after a full
 * parse, at a peak of gigabytes). Other problems are left to the full parse.
 */
export function checkCsvHeader(bytes: Uint8Array): void {
  const prefix = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, MAX_RECORD_CHARS * 4));
  let header: string[] | undefined;
  try {
    header = (parseCsv(prefix, { bom: true, delimiter: ',', quote: '"', trim: false, skip_empty_lines: true, relax_column_count: true, max_record_size: MAX_RECORD_CHARS, to_line: 1 }) as string[][])[0];
  } catch {
    return;
  }
  if (header !== undefined && header.length > MAX_COLUMNS) throw new LogsvcError('E_VALIDATION', `the file has ${header.length} columns, more than the limit of ${MAX_COLUMNS}`);
}

export function checkColumns(names: readonly string[]): void {
  if (names.length > MAX_COLUMNS) throw new LogsvcError('E_VALIDATION', `the file has ${names.length} columns, more than the limit of ${MAX_COLUMNS}`);
  const seen = new Set<string>();
  for (const n of names) {
    if (n === '') throw new LogsvcError('E_VALIDATION', 'the header row has an empty column name');
    if (seen.has(n)) throw new LogsvcError('E_VALIDATION', `the header row names column "${n.slice(0, 100)}" twice`);
    seen.add(n);
  }
}

/**
 * Containers a JSON lookup file may nest: the document (1) and its rows (2). A row's value that is
 * an object or an array (3) is refused as soon as it opens.
 */
const JSON_MAX_DEPTH = 2;

export function cellText(v: unknown, where: string): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new LogsvcError('E_VALIDATION', `${where}: nested objects and arrays are not supported in lookup files; values must be strings, numbers or booleans`);
}

/** One row of a JSON lookup file. */
export interface JsonRow {
  /** Its key, for an object keyed by lookup value; null in an array. */
  key: string | null;
  /** Where it is, for messages: `[3]` or `"key"`. */
  where: string;
  members: Record<string, unknown>;
}

const notTableShaped = (): LogsvcError => new LogsvcError('E_VALIDATION', 'the JSON file must be an object keyed by lookup value, or an array of objects');

/**
 * A JSON lookup file read as it arrives (@streamparser/json's tokenizer and token parser, pushed a
 * chunk at a time): `onRow` gets each row of the document as soon as it closed, and the emitted rows
 * are not kept, so memory follows one row, not the file. The nesting bound is checked on every
 * token, so a too-deep file is refused where it passes it, before the value is built; errors are
 * E_VALIDATION naming the problem (or what `onRow` threw). Synchronous per chunk.
 */
export class JsonRows {
  /** True: an object keyed by lookup value; false: an array; null: nothing read yet. */
  keyed: boolean | null = null;
  private readonly tokenizer = new (jsonLib().Tokenizer)();
  private readonly parser = new (jsonLib().TokenParser)({ paths: ['$.*'], keepStack: false });
  private depth = 0;
  private index = 0;

  constructor(onRow: (row: JsonRow) => void) {
    const { TokenType } = jsonLib();
    this.tokenizer.onToken = (t) => {
      if (t.token === TokenType.LEFT_BRACE || t.token === TokenType.LEFT_BRACKET) {
        if (this.depth === 0) this.keyed ??= t.token === TokenType.LEFT_BRACE;
        if (++this.depth > JSON_MAX_DEPTH) {
          throw new LogsvcError('E_VALIDATION', `the JSON file nests too deeply at byte ${t.offset}: nested objects and arrays are not supported in lookup files; it must be an object of flat objects or an array of flat objects (values are strings, numbers or booleans)`);
        }
      } else if (t.token === TokenType.RIGHT_BRACE || t.token === TokenType.RIGHT_BRACKET) {
        this.depth--;
      } else if (this.depth === 0) {
        throw notTableShaped();
      }
      this.parser.write(t);
    };
    this.parser.onValue = ({ value, key }) => {
      const where = typeof key === 'string' ? JSON.stringify(key.slice(0, 100)) : `[${this.index}]`;
      this.index++;
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LogsvcError('E_VALIDATION', `${where}: must be an object of fields`);
      onRow({ key: typeof key === 'string' ? key : null, where, members: value as Record<string, unknown> });
    };
  }

  write(chunk: Uint8Array): void {
    this.guard(() => this.tokenizer.write(chunk));
  }

  /** The end of the file: refuses a document that is cut short or empty. */
  end(): void {
    this.guard(() => {
      this.tokenizer.end();
      if (!this.parser.isEnded) this.parser.end();
    });
    if (this.keyed === null) throw notTableShaped();
  }

  private guard(run: () => void): void {
    try {
      run();
    } catch (err) {
      if (err instanceof LogsvcError) throw err;
      throw new LogsvcError('E_VALIDATION', `the JSON file is not valid JSON: ${(err as Error).message.slice(0, 200)}`);
    }
  }
}

/** The bytes of a file on disk or in memory, a megabyte at a time. */
export async function* fileChunks(source: CsvSource): AsyncGenerator<Uint8Array> {
  if (source instanceof Uint8Array) {
    for (let at = 0; at < source.byteLength; at += READ_CHUNK_BYTES) yield source.subarray(at, Math.min(source.byteLength, at + READ_CHUNK_BYTES));
    return;
  }
  try {
    for await (const chunk of createReadStream(source.path, { highWaterMark: READ_CHUNK_BYTES })) yield chunk as Buffer;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new LogsvcError('E_UNAVAILABLE', 'a lookup file was replaced or removed while it was being read; retry');
    throw err;
  }
}

/** Reads a whole JSON lookup file held in memory (tests and small callers; uploads use packJson's streaming passes). */
function jsonTable(bytes: Uint8Array, limits: ParseLimits): ParsedTable {
  const columns: string[] = [];
  const index = new Map<string, number>();
  // Rows are kept sparse (the members each object has) until the cell count has been checked:
  // the dense table of a sparse file is what could not fit in memory.
  const sparse: SparseRow[] = [];
  const reader = new JsonRows((r) => {
    // The key column comes first and has no name.
    if (r.key !== null && columns.length === 0) columns.push('');
    if (sparse.length >= limits.maxRows) throw tooMany(sparse.length + 1, limits);
    const row: SparseRow = { cols: [], values: [] };
    if (r.key !== null) {
      row.cols.push(0);
      row.values.push(r.key);
    }
    for (const [name, v] of Object.entries(r.members)) {
      row.cols.push(columnOf(name, r.where, columns, index));
      row.values.push(cellText(v, `${r.where}.${name.slice(0, 100)}`));
    }
    sparse.push(row);
  });
  reader.write(bytes);
  reader.end();
  if (reader.keyed === true && columns.length === 0) columns.push('');
  checkCells(sparse.length, columns.length, bytes.byteLength);
  return { columns, rows: sparse.map(denseRow), keyColumn: reader.keyed === true ? 0 : null };
}

/** The column of member `name` (added when new), refusing an empty name and more than MAX_COLUMNS. */
export function columnOf(name: string, where: string, columns: string[], index: Map<string, number>): number {
  let col = index.get(name);
  if (col !== undefined) return col;
  if (name === '') throw new LogsvcError('E_VALIDATION', `${where}: a member has an empty name`);
  if (columns.length >= MAX_COLUMNS) throw new LogsvcError('E_VALIDATION', `the file has more than ${MAX_COLUMNS} distinct members`);
  col = columns.length;
  columns.push(name);
  index.set(name, col);
  return col;
}

interface SparseRow {
  cols: number[];
  values: (string | null)[];
}

/** A row as long as its last member (cells past it are absent); null where a member is missing. */
function denseRow(r: SparseRow): (string | null)[] {
  let n = 0;
  for (const c of r.cols) if (c + 1 > n) n = c + 1;
  const row = new Array<string | null>(n).fill(null);
  for (let i = 0; i < r.cols.length; i++) row[r.cols[i]!] = r.values[i]!;
  return row;
}
