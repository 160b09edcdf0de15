/**
 * The built-in `json` parser: the line is one JSON object whose members become fields (flattened as
 * `a.b` and `a[0]`). `@timestamp` (ISO 8601 with a zone, or epoch milliseconds) sets the event time;
 * without it a top-level `timestamp` member is tried the same way.
 */
import { describeError } from '../../lib/errors.js';
import { jsonDepth } from '../../lib/json.js';
import { flattenInto } from '../flatten.js';
import { parseIsoTimestamp } from '../timestamps.js';
import type { BuiltInParser, ParseResult } from './parser.js';

/** Deeper documents are refused before JSON.parse, whose recursion has no limit of its own. */
export const JSON_PARSER_MAX_DEPTH = 64;
/** The Date range; epoch values beyond it cannot be stored or displayed. */
const MAX_EPOCH_MS = 8.64e15;
/** Error messages quote at most this much of the sender's text. */
const QUOTE_LIMIT = 64;

export class JsonParser implements BuiltInParser {
  readonly name = 'json';

  parse(rawstring: string, maxFields: number): ParseResult {
    const fields: Record<string, string> = {};
    try {
      const text = rawstring.trim();
      if (text.length === 0) return failed(fields, 'not a JSON object: empty input');
      if (jsonDepth(text, JSON_PARSER_MAX_DEPTH) > JSON_PARSER_MAX_DEPTH) {
        return failed(fields, `not a JSON object: nesting deeper than ${JSON_PARSER_MAX_DEPTH} levels`);
      }
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        return failed(fields, `not a JSON object: ${shorten(describeParseError(err))}`);
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        return failed(fields, `not a JSON object: found ${Array.isArray(value) ? 'an array' : describeKind(value)}`);
      }
      const obj = value as Record<string, unknown>;
      const { truncated } = flattenInto(fields, obj, '', maxFields);
      const result = withTimestamp(obj, fields);
      if (truncated) result.fieldsTruncated = true;
      return result;
    } catch (err) {
      return failed(fields, `json: ${describeError(err)}`);
    }
  }
}

function withTimestamp(obj: Record<string, unknown>, fields: Record<string, string>): ParseResult {
  const at = Object.hasOwn(obj, '@timestamp') ? obj['@timestamp'] : undefined;
  // The caller owns @timestamp; the member's text must not come back as an ordinary field.
  if (Object.hasOwn(fields, '@timestamp')) delete fields['@timestamp'];
  if (at !== undefined && at !== null) {
    const ts = readTimestamp(at);
    if (ts !== null) return { timestamp: ts.ms, timezone: ts.zone, fields, error: null };
    return {
      timestamp: null,
      timezone: null,
      fields,
      error: `@timestamp ${quote(at)} is neither an ISO 8601 date-time with a zone nor epoch milliseconds`,
    };
  }
  // `timestamp` is a common field name holding anything; only a value that reads as a time is used,
  // and one that does not is just a field, not a parse error.
  const plain = Object.hasOwn(obj, 'timestamp') ? readTimestamp(obj['timestamp']) : null;
  return { timestamp: plain?.ms ?? null, timezone: plain?.zone ?? null, fields, error: null };
}

function readTimestamp(v: unknown): { ms: number; zone: string } | null {
  if (typeof v === 'string') return parseIsoTimestamp(v, { requireZone: true });
  if (typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= MAX_EPOCH_MS) {
    return { ms: Math.trunc(v), zone: 'Z' };
  }
  return null;
}

function failed(fields: Record<string, string>, error: string): ParseResult {
  return { timestamp: null, timezone: null, fields, error };
}

function describeKind(v: unknown): string {
  return v === null ? 'null' : `a ${typeof v}`;
}

function describeParseError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function quote(v: unknown): string {
  if (typeof v === 'string') {
    const cut = v.length > QUOTE_LIMIT;
    return `${JSON.stringify(cut ? v.slice(0, QUOTE_LIMIT) : v)}${cut ? '...' : ''}`;
  }
  return typeof v === 'object' ? `(${Array.isArray(v) ? 'an array' : 'an object'})` : String(v);
}

/** One line, bounded: V8's messages embed a snippet of the input. */
function shorten(text: string, limit = 160): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length > limit ? `${line.slice(0, limit)}...` : line;
}
