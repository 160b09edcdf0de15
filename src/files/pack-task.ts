/** The worker-pool task that reads an uploaded file into a packed table (or says why it cannot). */
import { LogsvcError, type ErrorCode } from '../lib/errors.js';
import type { FileKind } from './names.js';
import { packCsv, packJson, type PackedTable } from './packed.js';

/** A file to pack: its bytes, or its path on disk and size (a CSV file is then streamed from disk). */
export type PackSource = { bytes: Uint8Array } | { path: string; size: number };

export interface PackTask {
  source: PackSource;
  kind: FileKind;
  hash: string;
  maxRows: number;
}

export type PackTaskResult = { ok: true; table: PackedTable } | { ok: false; code: ErrorCode; message: string };

async function pack(t: PackTask): Promise<PackedTable> {
  const limits = { maxRows: t.maxRows };
  // Streamed, in two passes: the table, not the rows as strings (packCsv, packJson).
  const packer = t.kind === 'csv' ? packCsv : packJson;
  return 'path' in t.source ? packer(t.hash, { path: t.source.path }, t.source.size, limits) : packer(t.hash, t.source.bytes, t.source.bytes.byteLength, limits);
}

export async function runPackTask(t: PackTask): Promise<PackTaskResult> {
  try {
    return { ok: true, table: await pack(t) };
  } catch (err) {
    if (err instanceof LogsvcError) return { ok: false, code: err.code, message: err.message };
    // Out of memory while reading the file (a huge string or array): too large, not a server fault.
    if (err instanceof RangeError) return { ok: false, code: 'E_BODY_TOO_LARGE', message: `the file is too large to read into a table: ${err.message}` };
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { ok: false, code: 'E_UNAVAILABLE', message: 'a lookup file was replaced or removed while it was being read; retry' };
    return { ok: false, code: 'E_INTERNAL', message: `reading the file failed: ${(err as Error).message}` };
  }
}

export function unwrapPackResult(r: PackTaskResult): PackedTable {
  if (!r.ok) throw new LogsvcError(r.code, r.message);
  return r.table;
}
