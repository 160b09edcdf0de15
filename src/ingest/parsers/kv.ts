/**
 * The built-in `kv` parser, the product's default: an ISO 8601 timestamp with a zone near the start
 * of the line sets @timestamp, then every key=value pair in the line becomes a field. A line
 * without a timestamp is not an error; the caller falls back to the ingest time.
 */
import { describeError } from '../../lib/errors.js';
import { matchIsoTimestampAt, type IsoMatch } from '../timestamps.js';
import { isDigit } from './chars.js';
import { FieldSink } from './field-sink.js';
import { extractKeyValues } from './kv-pairs.js';
import type { BuiltInParser, ParseResult } from './parser.js';

/** The timestamp must start within this many characters (the product's documented window). */
const TIMESTAMP_WINDOW = 128;

export class KvParser implements BuiltInParser {
  readonly name = 'kv';

  parse(rawstring: string, maxFields: number): ParseResult {
    const sink = new FieldSink(maxFields);
    try {
      const ts = findLeadingTimestamp(rawstring);
      extractKeyValues(rawstring, 0, sink, true);
      return { timestamp: ts?.ms ?? null, timezone: ts?.zone ?? null, fields: sink.fields, error: null, fieldsTruncated: sink.full };
    } catch (err) {
      return { timestamp: null, timezone: null, fields: sink.fields, error: `kv: ${describeError(err)}` };
    }
  }
}

/**
 * The first ISO 8601 date-time with a zone that starts in the window, e.g. after "[" or a syslog
 * prefix. A candidate must not be glued to digits on either side ("12020-…", "…+020012"), which
 * would make it part of some other number.
 */
export function findLeadingTimestamp(text: string): (IsoMatch & { zone: string }) | null {
  const limit = Math.min(text.length, TIMESTAMP_WINDOW);
  for (let i = 0; i < limit; i++) {
    if (!isDigit(text.charCodeAt(i)) || (i > 0 && isDigit(text.charCodeAt(i - 1)))) continue;
    const m = matchIsoTimestampAt(text, i);
    if (m === null || m.zone === null) continue;
    if (m.end < text.length && isDigit(text.charCodeAt(m.end))) continue;
    return { ms: m.ms, zone: m.zone, end: m.end };
  }
  return null;
}
