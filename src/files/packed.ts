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
import { MAX_CELLS, type ParsedTable } from './parse.js';

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

export function packTable(hash: string, kind: FileKind, p: ParsedTable): PackedTable {
  const nCols = p.columns.length;
  const cells = p.rows.length * nCols;
  // parseTable bounds cells by the file's size; this guards any other caller.
  if (cells > MAX_CELLS) throw new LogsvcError('E_BODY_TOO_LARGE', `the table has ${cells} cells, more than the limit of ${MAX_CELLS}`);
  let units = 0;
  let wide = false;
  for (const row of p.rows) {
    for (const v of row) {
      if (v === null) continue;
      units += v.length;
      if (!wide) for (let i = 0; i < v.length; i++) if (v.charCodeAt(i) > 255) { wide = true; break; }
    }
  }
  const absentAt = (cells + 1) * 4;
  const heapAt = absentAt + cells + ((absentAt + cells) & 1);
  const sab = allocate(heapAt + units * (wide ? 2 : 1));
  const offsets = new Uint32Array(sab, 0, cells + 1);
  const absent = new Uint8Array(sab, absentAt, cells);
  const heap = wide ? new Uint16Array(sab, heapAt, units) : new Uint8Array(sab, heapAt, units);
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
