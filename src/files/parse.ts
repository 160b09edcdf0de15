/**
 * Turning an uploaded file's bytes into rows (csv-parse's one home). CSV as the product reads it: the
 * first row names the columns, values are comma separated, whitespace is kept in names and values,
 * a value holding a comma is quoted with double quotes. JSON in the two shapes the product takes: an
 * object keyed by the lookup value whose values are flat objects (the key column has no name), or an
 * array of flat objects (the key column is picked by the query). Every problem is an E_VALIDATION
 * naming the line, row or member.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import { LogsvcError } from '../lib/errors.js';
import { jsonDepth } from '../lib/json.js';
import type { FileKind } from './names.js';

/** Columns one file may have. */
export const MAX_COLUMNS = 1000;
/** Characters one CSV record may have (csv-parse's guard against a wrong quote running to the end). */
const MAX_RECORD_CHARS = 1024 * 1024;

export interface ParsedTable {
  /** Column names; the key column of a keyed JSON object is named "" (it has no name). */
  columns: string[];
  /** Row-major cells; null where a JSON row has no such member. */
  rows: (string | null)[][];
  /** The index of the unnamed key column (keyed JSON objects), else null. */
  keyColumn: number | null;
}

export interface ParseLimits {
  maxRows: number;
}

function tooMany(rows: number, limits: ParseLimits): LogsvcError {
  return new LogsvcError('E_VALIDATION', `the file has ${rows} or more rows, more than the limit of ${limits.maxRows} (files.max_rows)`);
}

export function parseTable(bytes: Uint8Array, kind: FileKind, limits: ParseLimits): ParsedTable {
  return kind === 'csv' ? csvTable(bytes, limits) : jsonTable(bytes, limits);
}

function csvTable(bytes: Uint8Array, limits: ParseLimits): ParsedTable {
  let records: string[][];
  try {
    records = parseCsv(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
      bom: true,
      delimiter: ',',
      quote: '"',
      trim: false,
      skip_empty_lines: true,
      relax_column_count: false,
      max_record_size: MAX_RECORD_CHARS,
      // One record past the limit tells us the file is too long without reading all of it.
      to: limits.maxRows + 2,
    });
  } catch (err) {
    throw new LogsvcError('E_VALIDATION', `the CSV file cannot be read: ${(err as Error).message.replace(/\s+/g, ' ').slice(0, 300)}`);
  }
  const header = records[0];
  if (header === undefined) throw new LogsvcError('E_VALIDATION', 'the CSV file is empty; its first row must name the columns');
  checkColumns(header);
  if (records.length - 1 > limits.maxRows) throw tooMany(records.length - 1, limits);
  return { columns: header, rows: records.slice(1), keyColumn: null };
}

function checkColumns(names: readonly string[]): void {
  if (names.length > MAX_COLUMNS) throw new LogsvcError('E_VALIDATION', `the file has ${names.length} columns, more than the limit of ${MAX_COLUMNS}`);
  const seen = new Set<string>();
  for (const n of names) {
    if (n === '') throw new LogsvcError('E_VALIDATION', 'the header row has an empty column name');
    if (seen.has(n)) throw new LogsvcError('E_VALIDATION', `the header row names column "${n.slice(0, 100)}" twice`);
    seen.add(n);
  }
}

const JSON_MAX_DEPTH = 3;

function cellText(v: unknown, where: string): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new LogsvcError('E_VALIDATION', `${where}: nested objects and arrays are not supported in lookup files; values must be strings, numbers or booleans`);
}

function jsonTable(bytes: Uint8Array, limits: ParseLimits): ParsedTable {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8').replace(/^\uFEFF/, '');
  if (jsonDepth(text, JSON_MAX_DEPTH + 1) > JSON_MAX_DEPTH) {
    throw new LogsvcError('E_VALIDATION', 'the JSON file nests too deeply: it must be an object of flat objects or an array of flat objects');
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new LogsvcError('E_VALIDATION', `the JSON file is not valid JSON: ${(err as Error).message.slice(0, 200)}`);
  }
  const columns: string[] = [];
  const index = new Map<string, number>();
  const rows: (string | null)[][] = [];
  const addRow = (obj: unknown, where: string, key: string | null): void => {
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw new LogsvcError('E_VALIDATION', `${where}: must be an object of fields`);
    if (rows.length >= limits.maxRows) throw tooMany(rows.length + 1, limits);
    const row: (string | null)[] = new Array<string | null>(columns.length).fill(null);
    if (key !== null) row[0] = key;
    for (const [name, v] of Object.entries(obj as Record<string, unknown>)) {
      if (name === '') throw new LogsvcError('E_VALIDATION', `${where}: a member has an empty name`);
      let col = index.get(name);
      if (col === undefined) {
        if (columns.length >= MAX_COLUMNS) throw new LogsvcError('E_VALIDATION', `the file has more than ${MAX_COLUMNS} distinct members`);
        col = columns.length;
        columns.push(name);
        index.set(name, col);
      }
      row[col] = cellText(v, `${where}.${name.slice(0, 100)}`);
    }
    rows.push(row);
  };
  if (Array.isArray(doc)) {
    doc.forEach((obj, i) => addRow(obj, `[${i}]`, null));
    return { columns, rows: rows.map((r) => pad(r, columns.length)), keyColumn: null };
  }
  if (typeof doc === 'object' && doc !== null) {
    // The key column comes first and has no name.
    columns.push('');
    for (const [key, obj] of Object.entries(doc as Record<string, unknown>)) addRow(obj, JSON.stringify(key.slice(0, 100)), key);
    return { columns, rows: rows.map((r) => pad(r, columns.length)), keyColumn: 0 };
  }
  throw new LogsvcError('E_VALIDATION', 'the JSON file must be an object keyed by lookup value, or an array of objects');
}

function pad(row: (string | null)[], n: number): (string | null)[] {
  while (row.length < n) row.push(null);
  return row;
}
