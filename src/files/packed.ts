/**
 * A lookup table packed into one SharedArrayBuffer, so that every worker thread reads the same
 * memory: a file is parsed once per content hash (on a pool thread) and then handed to query tasks
 * without copying (structured cloning shares a SharedArrayBuffer). Layout, in order:
 *
 *   offsets  u32 x (cells + 1)   start of cell i in the heap, in code units (row-major cells)
 *   absent   u8  x cells          1 where a JSON row has no such member
 *   (padding to 2 bytes)
 *   heap     u8 or u16 x units    every cell's UTF-16 code units; one byte each when all fit
 *
 * A one-byte heap halves the memory of the usual ASCII lookup file; comparisons work on code units
 * either way, so nothing is ever encoded or decoded to look a value up.
 */
import { LogsvcError } from '../lib/errors.js';
import type { FileKind } from './names.js';
import { cellLimit, cellText, checkCells, checkColumns, columnOf, csvRecords, fileChunks, JsonRows, MAX_CELLS, tooMany, type CsvSource, type JsonRow, type ParseLimits, type ParsedTable } from './parse.js';

export interface PackedTable {
  /** The content hash of the file the table was read from. */
  hash: string;
  /** How its bytes were read: the same bytes make different tables as CSV and as JSON. */
  kind: FileKind;
  columns: string[];
  nRows: number;
  keyColumn: number | null;
  /** True: the heap holds UTF-16 code units (some value had a unit above 255). */
  wide: boolean;
  heapUnits: number;
  sab: SharedArrayBuffer;
}

/** The typed views of a packed table (cheap; made once per thread and table). */
export interface TableViews {
  t: PackedTable;
  nCols: number;
  offsets: Uint32Array;
  absent: Uint8Array;
  heap: Uint8Array | Uint16Array;
}

/** The key of a table in caches: its content hash and the kind it was read as. */
export function tableKey(t: Pick<PackedTable, 'hash' | 'kind'>): string {
  return `${t.kind}:${t.hash}`;
}

/** A new table's buffer and its typed views, laid out as the module comment says. */
function layout(cells: number, units: number, wide: boolean): { sab: SharedArrayBuffer; offsets: Uint32Array; absent: Uint8Array; heap: Uint8Array | Uint16Array } {
  // parseTable and packCsv bound cells by the file's size; this guards any other caller.
  if (cells > MAX_CELLS) throw new LogsvcError('E_BODY_TOO_LARGE', `the table has ${cells} cells, more than the limit of ${MAX_CELLS}`);
  const absentAt = (cells + 1) * 4;
  const heapAt = absentAt + cells + ((absentAt + cells) & 1);
  const sab = allocate(heapAt + units * (wide ? 2 : 1));
  return {
    sab,
    offsets: new Uint32Array(sab, 0, cells + 1),
    absent: new Uint8Array(sab, absentAt, cells),
    heap: wide ? new Uint16Array(sab, heapAt, units) : new Uint8Array(sab, heapAt, units),
  };
}

function isWide(v: string): boolean {
  for (let i = 0; i < v.length; i++) if (v.charCodeAt(i) > 255) return true;
  return false;
}

export function packTable(hash: string, kind: FileKind, p: ParsedTable): PackedTable {
  const nCols = p.columns.length;
  const cells = p.rows.length * nCols;
  let units = 0;
  let wide = false;
  for (const row of p.rows) {
    for (const v of row) {
      if (v === null) continue;
      units += v.length;
      if (!wide) wide = isWide(v);
    }
  }
  const { sab, offsets, absent, heap } = layout(cells, units, wide);
  let at = 0;
  let c = 0;
  for (const row of p.rows) {
    for (let j = 0; j < nCols; j++, c++) {
      offsets[c] = at;
      const v = row[j];
      if (v === null || v === undefined) {
        absent[c] = 1;
        continue;
      }
      for (let i = 0; i < v.length; i++) heap[at++] = v.charCodeAt(i);
    }
  }
  offsets[cells] = at;
  return { hash, kind, columns: p.columns, nRows: p.rows.length, keyColumn: p.keyColumn, wide, heapUnits: units, sab };
}

/**
 * Packs a CSV file read as a stream, twice: the first pass validates it and counts its rows, code
 * units and whether any unit is above 255, refusing as soon as a bound is passed (columns, rows,
 * cells); the second fills a table of exactly that size. Memory is the table plus one record at a
 * time, never the file's rows as strings (issue 24: an upload took ~13x the file's size).
 * `fileBytes` is the file's size (the cell bound depends on it).
 */
export async function packCsv(hash: string, source: CsvSource, fileBytes: number, limits: ParseLimits): Promise<PackedTable> {
  let columns: string[] | null = null;
  let rows = 0;
  let units = 0;
  let wide = false;
  const maxCells = cellLimit(fileBytes);
  for await (const record of csvRecords(source)) {
    if (columns === null) {
      checkColumns(record);
      columns = record;
      continue;
    }
    rows++;
    if (rows > limits.maxRows) throw tooMany(rows, limits);
    if (rows * columns.length > maxCells) checkCells(rows, columns.length, fileBytes);
    for (const v of record) {
      units += v.length;
      if (!wide) wide = isWide(v);
    }
  }
  if (columns === null) throw new LogsvcError('E_VALIDATION', 'the CSV file is empty; its first row must name the columns');
  const nCols = columns.length;
  const cells = rows * nCols;
  const { sab, offsets, heap } = layout(cells, units, wide);
  let at = 0;
  let c = 0;
  let header = true;
  for await (const record of csvRecords(source)) {
    if (header) {
      header = false;
      continue;
    }
    // The bytes are content-addressed and never change; a second pass that differs is a bug.
    if (c + nCols > cells) throw new LogsvcError('E_INTERNAL', 'the CSV file read differently the second time');
    for (let j = 0; j < nCols; j++, c++) {
      offsets[c] = at;
      const v = record[j]!;
      if (at + v.length > units) throw new LogsvcError('E_INTERNAL', 'the CSV file read differently the second time');
      for (let i = 0; i < v.length; i++) heap[at++] = v.charCodeAt(i);
    }
  }
  if (c !== cells) throw new LogsvcError('E_INTERNAL', 'the CSV file read differently the second time');
  offsets[cells] = at;
  return { hash, kind: 'csv', columns, nRows: rows, keyColumn: null, wide, heapUnits: units, sab };
}

/** Feeds a file's chunks to a JsonRows reader that calls `onRow`; returns whether the file was a keyed object. */
async function readJsonRows(source: CsvSource, onRow: (row: JsonRow) => void): Promise<boolean> {
  const reader = new JsonRows(onRow);
  for await (const chunk of fileChunks(source)) reader.write(chunk);
  reader.end();
  return reader.keyed === true;
}

/**
 * Packs a JSON file read as a stream, in two passes as packCsv does: the first validates it and
 * counts its rows, columns (distinct members, in order of appearance; a keyed object's unnamed key
 * column first), code units and whether any unit is above 255, refusing as soon as a bound is
 * passed (nesting, columns, rows, cells); the second fills a table of exactly that size, a row at a
 * time. Memory is the table plus one row, never the document (issue 24: JSON.parse of the whole
 * file and its rows as strings took several times the file).
 */
export async function packJson(hash: string, source: CsvSource, fileBytes: number, limits: ParseLimits): Promise<PackedTable> {
  const columns: string[] = [];
  const index = new Map<string, number>();
  let rows = 0;
  let units = 0;
  let wide = false;
  const maxCells = cellLimit(fileBytes);
  const count = (v: string | null): void => {
    if (v === null) return;
    units += v.length;
    if (!wide) wide = isWide(v);
  };
  const keyed = await readJsonRows(source, (r) => {
    if (r.key !== null && columns.length === 0) columns.push('');
    rows++;
    if (rows > limits.maxRows) throw tooMany(rows, limits);
    if (r.key !== null) count(r.key);
    for (const [name, v] of Object.entries(r.members)) {
      columnOf(name, r.where, columns, index);
      count(cellText(v, `${r.where}.${name.slice(0, 100)}`));
    }
    if (rows * columns.length > maxCells) checkCells(rows, columns.length, fileBytes);
  });
  if (keyed && columns.length === 0) columns.push('');
  const nCols = columns.length;
  const cells = rows * nCols;
  const { sab, offsets, absent, heap } = layout(cells, units, wide);
  const differs = (): LogsvcError => new LogsvcError('E_INTERNAL', 'the JSON file read differently the second time');
  /** One row's values by column (reused; cleared after each row). */
  const values: (string | null | undefined)[] = new Array<string | null | undefined>(nCols).fill(undefined);
  let at = 0;
  let c = 0;
  await readJsonRows(source, (r) => {
    if (c + nCols > cells) throw differs();
    if (r.key !== null) values[0] = r.key;
    for (const [name, v] of Object.entries(r.members)) {
      const col = index.get(name);
      if (col === undefined) throw differs();
      values[col] = cellText(v, r.where);
    }
    for (let j = 0; j < nCols; j++, c++) {
      offsets[c] = at;
      const v = values[j];
      values[j] = undefined;
      if (v === null || v === undefined) {
        absent[c] = 1;
        continue;
      }
      if (at + v.length > units) throw differs();
      for (let i = 0; i < v.length; i++) heap[at++] = v.charCodeAt(i);
    }
  });
  if (c !== cells) throw differs();
  offsets[cells] = at;
  return { hash, kind: 'json', columns, nRows: rows, keyColumn: keyed ? 0 : null, wide, heapUnits: units, sab };
}

/** A shared buffer, or 413 when the process cannot have one that large (never a crash or a 500). */
function allocate(bytes: number): SharedArrayBuffer {
  try {
    return new SharedArrayBuffer(bytes);
  } catch (err) {
    if (err instanceof RangeError) throw new LogsvcError('E_BODY_TOO_LARGE', `the file's table needs ${bytes} bytes of memory, which cannot be allocated now (${err.message})`);
    throw err;
  }
}

export function viewsOf(t: PackedTable): TableViews {
  const nCols = t.columns.length;
  const cells = t.nRows * nCols;
  const absentAt = (cells + 1) * 4;
  const heapAt = absentAt + cells + ((absentAt + cells) & 1);
  return {
    t,
    nCols,
    offsets: new Uint32Array(t.sab, 0, cells + 1),
    absent: new Uint8Array(t.sab, absentAt, cells),
    heap: t.wide ? new Uint16Array(t.sab, heapAt, t.heapUnits) : new Uint8Array(t.sab, heapAt, t.heapUnits),
  };
}

/** Code units per String.fromCharCode call (its argument count is bounded). */
const CHUNK = 8192;

/** The value of a cell, or undefined when the row has no such member. */
export function cellValue(v: TableViews, row: number, col: number): string | undefined {
  const c = row * v.nCols + col;
  if (v.absent[c] === 1) return undefined;
  const a = v.offsets[c]!;
  const b = v.offsets[c + 1]!;
  if (b - a <= CHUNK) return String.fromCharCode.apply(null, v.heap.subarray(a, b) as unknown as number[]);
  let out = '';
  for (let i = a; i < b; i += CHUNK) out += String.fromCharCode.apply(null, v.heap.subarray(i, Math.min(b, i + CHUNK)) as unknown as number[]);
  return out;
}
