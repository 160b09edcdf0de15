/**
 * The error model. Every failure the node reports has a stable `code` (listed in docs/errors.md),
 * the HTTP status a client sees, and whether retrying may help. Messages name the operation and the
 * input; they are one line, because they are sent to clients as text/plain bodies.
 */

export type ErrorCode =
  | 'E_CONFIG_INVALID'
  | 'E_DATA_DIR_LOCKED'
  | 'E_DATA_DIR_UNUSABLE'
  | 'E_STATE_CORRUPT'
  | 'E_STATE_WRITE_FAILED'
  | 'E_AUTH_MISSING'
  | 'E_AUTH_INVALID'
  | 'E_FORBIDDEN'
  | 'E_NOT_FOUND'
  | 'E_METHOD_NOT_ALLOWED'
  | 'E_BODY_TOO_LARGE'
  | 'E_BAD_REQUEST'
  | 'E_JSON_MALFORMED'
  | 'E_JSON_TOO_DEEP'
  | 'E_UNSUPPORTED_MEDIA_TYPE'
  | 'E_VALIDATION'
  | 'E_CONFLICT'
  | 'E_LAYOUT_INVALID'
  | 'E_QUERY'
  | 'E_QUERY_LIMIT'
  | 'E_QUERY_MEMORY'
  | 'E_QUERY_MEMORY_BUSY'
  | 'E_TOO_MANY_REQUESTS'
  | 'E_UNAVAILABLE'
  | 'E_DISK_FULL'
  | 'E_NODE_STOPPING'
  | 'E_NOT_CONFIGURED'
  | 'E_TARGET_REFUSED'
  | 'E_ACTION_FAILED'
  | 'E_PROTOCOL'
  | 'E_TIMEOUT'
  | 'E_NOT_BUILT'
  | 'E_INTERNAL';

const STATUS: Record<ErrorCode, number> = {
  E_CONFIG_INVALID: 500,
  E_DATA_DIR_LOCKED: 500,
  E_DATA_DIR_UNUSABLE: 500,
  E_STATE_CORRUPT: 500,
  E_STATE_WRITE_FAILED: 503,
  E_AUTH_MISSING: 401,
  E_AUTH_INVALID: 401,
  E_FORBIDDEN: 403,
  E_NOT_FOUND: 404,
  E_METHOD_NOT_ALLOWED: 405,
  E_BODY_TOO_LARGE: 413,
  E_BAD_REQUEST: 400,
  E_JSON_MALFORMED: 400,
  E_JSON_TOO_DEEP: 400,
  E_UNSUPPORTED_MEDIA_TYPE: 415,
  E_VALIDATION: 400,
  E_CONFLICT: 409,
  E_LAYOUT_INVALID: 400,
  E_QUERY: 400,
  E_QUERY_LIMIT: 400,
  E_QUERY_MEMORY: 400,
  E_QUERY_MEMORY_BUSY: 429,
  E_TOO_MANY_REQUESTS: 429,
  E_UNAVAILABLE: 503,
  E_DISK_FULL: 503,
  E_NODE_STOPPING: 503,
  E_NOT_CONFIGURED: 400,
  E_TARGET_REFUSED: 400,
  E_ACTION_FAILED: 502,
  E_PROTOCOL: 502,
  E_TIMEOUT: 504,
  E_NOT_BUILT: 501,
  E_INTERNAL: 500,
};

const RETRIABLE: ReadonlySet<ErrorCode> = new Set(['E_STATE_WRITE_FAILED', 'E_UNAVAILABLE', 'E_DISK_FULL', 'E_NODE_STOPPING', 'E_TOO_MANY_REQUESTS', 'E_TIMEOUT', 'E_QUERY_MEMORY_BUSY']);

export class LogsvcError extends Error {
  readonly code: ErrorCode;
  readonly httpStatus: number;
  readonly retriable: boolean;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LogsvcError';
    this.code = code;
    this.httpStatus = STATUS[code];
    this.retriable = RETRIABLE.has(code);
  }

  /** Plain data, for crossing worker and peer boundaries. */
  toJSON(): { code: ErrorCode; message: string; httpStatus: number; retriable: boolean } {
    return { code: this.code, message: this.message, httpStatus: this.httpStatus, retriable: this.retriable };
  }
}

/** Whether `code` is one of ours (a code that came from a peer as plain data may not be). */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(STATUS, code);
}

export function isLogsvcError(err: unknown): err is LogsvcError {
  return err instanceof LogsvcError;
}

/** A one-line description of any thrown value, safe to log. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`.replace(/\s*\n\s*/g, ' ');
  return String(err);
}
