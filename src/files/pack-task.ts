/** The worker-pool task that reads an uploaded file into a packed table (or says why it cannot). */
import { LogsvcError, type ErrorCode } from '../lib/errors.js';
import type { FileKind } from './names.js';
import { packTable, type PackedTable } from './packed.js';
import { parseTable } from './parse.js';

export interface PackTask {
  bytes: Uint8Array;
  kind: FileKind;
  hash: string;
  maxRows: number;
}

export type PackTaskResult = { ok: true; table: PackedTable } | { ok: false; code: ErrorCode; message: string };

export function runPackTask(t: PackTask): PackTaskResult {
  try {
    return { ok: true, table: packTable(t.hash, t.kind, parseTable(t.bytes, t.kind, { maxRows: t.maxRows })) };
  } catch (err) {
    if (err instanceof LogsvcError) return { ok: false, code: err.code, message: err.message };
    // Out of memory while reading the file (a huge string or array): too large, not a server fault.
    if (err instanceof RangeError) return { ok: false, code: 'E_BODY_TOO_LARGE', message: `the file is too large to read into a table: ${err.message}` };
    return { ok: false, code: 'E_INTERNAL', message: `reading the file failed: ${(err as Error).message}` };
  }
}

export function unwrapPackResult(r: PackTaskResult): PackedTable {
  if (!r.ok) throw new LogsvcError(r.code, r.message);
  return r.table;
}
