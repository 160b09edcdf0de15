/**
 * The contract every built-in parser meets. A parser turns one raw line into a timestamp, a zone
 * and string fields; it never throws, because a failed parse is data (the event is stored with
 * `@error` set), not a request failure.
 */

export interface ParseResult {
  /** ms UTC, or null when the parser found no timestamp (the caller then uses the ingest time). */
  timestamp: number | null;
  timezone: string | null;
  fields: Record<string, string>;
  /** null on success; otherwise a one-line message. A failed parse still yields whatever fields were found. */
  error: string | null;
  /** True when fields were dropped because of the per-event field limit. */
  fieldsTruncated?: boolean;
}

export interface BuiltInParser {
  readonly name: string;
  parse(rawstring: string, maxFields: number): ParseResult;
}
