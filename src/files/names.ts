/**
 * Names of uploaded files. A name is one path segment (it is used as a key in global state and
 * appears in URLs, never as a path on disk: bytes are stored under their content hash), so anything
 * that could be read as a directory step is refused outright rather than cleaned up.
 */
import { LogsvcError } from '../lib/errors.js';

export const MAX_FILE_NAME_CHARS = 255;
/** How a query names a shared file: `/shared/<name>`. */
export const SHARED_PREFIX = '/shared/';

export type FileKind = 'csv' | 'json';

/** The kind of a valid file name; throws E_VALIDATION naming the problem otherwise. */
export function checkFileName(name: unknown): FileKind {
  if (typeof name !== 'string' || name.length === 0) throw new LogsvcError('E_VALIDATION', 'file name: required');
  const shown = JSON.stringify(name.slice(0, 100));
  if (name.length > MAX_FILE_NAME_CHARS) throw new LogsvcError('E_VALIDATION', `file name ${shown}...: longer than ${MAX_FILE_NAME_CHARS} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new LogsvcError('E_VALIDATION', `file name ${shown}: control characters are not allowed`);
  if (name.includes('/') || name.includes('\\') || name === '.' || name === '..' || name.startsWith('..')) {
    throw new LogsvcError('E_VALIDATION', `file name ${shown}: must be a plain file name without "/", "\\" or a leading ".."`);
  }
  const lower = name.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.json')) return 'json';
  throw new LogsvcError('E_VALIDATION', `file name ${shown}: must end in .csv or .json`);
}
