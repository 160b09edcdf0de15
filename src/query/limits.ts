/**
 * Size bounds on what query functions make (docs/query-limits.md). A function that builds a string
 * checks the length it is about to make against `MAX_VALUE_CHARS` before making it, so an
 * expansion (`format("%999999999d")`, `replace` with a long replacement, `concat` of large fields)
 * ends the query with a 400 naming the function instead of V8's "Invalid string length" (a 500) or
 * gigabytes of heap. Nesting that functions walk (parseJson) is bounded by `MAX_NESTING`.
 */
import { LogsvcError } from '../lib/errors.js';

/** The longest string one query function may make: 16 Mi characters (32 MiB at most in V8). */
export const MAX_VALUE_CHARS = 16 * 1024 * 1024;

/** The deepest JSON a query function walks; deeper input marks the event with @error. */
export const MAX_NESTING = 64;

/** The widest field a format() conversion may pad to, and the most digits it may print. */
export const MAX_FORMAT_WIDTH = MAX_VALUE_CHARS;
export const MAX_FORMAT_PRECISION = 100;

/** The error for a value of `chars` characters that `fn` would make past the bound. */
export function valueTooLarge(fn: string, chars: number): LogsvcError {
  return new LogsvcError(
    'E_QUERY_LIMIT',
    `${fn}: the result would be at least ${chars} characters long, more than the ${MAX_VALUE_CHARS} characters a query function may make (docs/query-limits.md)`,
  );
}

/** Throws unless a value of `chars` characters may be made by `fn`. */
export function checkValueSize(fn: string, chars: number): void {
  if (chars > MAX_VALUE_CHARS) throw valueTooLarge(fn, chars);
}

/**
 * What a stage's engine-level failure means for the client: V8's RangeErrors for a string past its
 * length limit or a call stack overflow become a 400 that says which bound was passed (the
 * functions check their own sizes first; this is the net under what they cannot foresee).
 */
export function engineLimitError(err: unknown): LogsvcError | null {
  if (!(err instanceof RangeError)) return null;
  if (/Invalid string length|Invalid array length|Array buffer allocation failed/.test(err.message)) {
    return new LogsvcError('E_QUERY_LIMIT', `the query made a value larger than the engine can hold (${err.message}); see docs/query-limits.md`);
  }
  if (/Maximum call stack size exceeded/.test(err.message)) {
    return new LogsvcError('E_QUERY_LIMIT', 'the query nests too deeply to run (Maximum call stack size exceeded); see docs/query-limits.md');
  }
  return null;
}
