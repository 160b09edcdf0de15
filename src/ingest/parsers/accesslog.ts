/**
 * The built-in `accesslog` parser: Apache/Nginx access lines in the combined format
 * `host ident authuser [dd/MMM/yyyy:HH:mm:ss Z] "METHOD url HTTP/x.y" status bytes "referer" "agent"`
 * (optionally followed by a response time), and the common format, which stops after `bytes`.
 * The bracketed date, with its offset, is the event time.
 */
import { describeError } from '../../lib/errors.js';
import { digitsAt, matchOffsetAt, monthAbbreviationAt, utcMillis } from '../timestamps.js';
import { FieldSink } from './field-sink.js';
import { LineCursor } from './line-cursor.js';
import type { BuiltInParser, ParseResult } from './parser.js';

export class AccessLogParser implements BuiltInParser {
  readonly name = 'accesslog';

  parse(rawstring: string, maxFields: number): ParseResult {
    const sink = new FieldSink(maxFields);
    try {
      const line = scanAccessLine(new LineCursor(rawstring));
      if (typeof line === 'string') {
        return { timestamp: null, timezone: null, fields: {}, error: `not an access log line: ${line}` };
      }
      // Field order follows the line; each `set` is a no-op once the limit is reached.
      sink.set('client', line.client);
      if (line.ident !== '-') sink.set('ident', line.ident);
      if (line.userid !== '-') sink.set('userid', line.userid);
      const req = splitRequest(line.request);
      if (req !== null) {
        sink.set('method', req.method);
        sink.set('url', req.url);
        if (req.httpversion !== null) sink.set('httpversion', req.httpversion);
      }
      sink.set('statuscode', line.status);
      if (line.bytes !== '-') sink.set('responsesize', line.bytes);
      if (line.referrer !== null) sink.set('referrer', line.referrer);
      if (line.useragent !== null) sink.set('useragent', line.useragent);
      if (line.responsetime !== null) sink.set('responsetime', line.responsetime);
      return { timestamp: line.ms, timezone: line.zone, fields: sink.fields, error: null, fieldsTruncated: sink.full };
    } catch (err) {
      return { timestamp: null, timezone: null, fields: sink.fields, error: `accesslog: ${describeError(err)}` };
    }
  }
}

interface AccessLine {
  client: string;
  ident: string;
  userid: string;
  ms: number;
  zone: string;
  request: string;
  status: string;
  bytes: string;
  referrer: string | null;
  useragent: string | null;
  responsetime: string | null;
}

/** The parts of the line, or a short description of the first thing that did not match. */
function scanAccessLine(cur: LineCursor): AccessLine | string {
  cur.spaces();
  const client = cur.token();
  if (client === null || !cur.spaces()) return 'missing client address';
  const ident = cur.token();
  if (ident === null || !cur.spaces()) return 'missing ident';
  const userid = cur.token();
  if (userid === null || !cur.spaces()) return 'missing user id';
  const time = scanBracketedTime(cur);
  if (time === null || !cur.spaces()) return 'missing [dd/MMM/yyyy:HH:mm:ss Z] date';
  const request = cur.quoted();
  if (request === null || !cur.spaces()) return 'missing quoted request';
  const status = cur.token();
  if (status === null || !isDigits(status)) return 'missing status code';
  cur.spaces();
  const bytes = cur.token();
  if (bytes === null || (bytes !== '-' && !isDigits(bytes))) return 'missing response size';

  // Everything after the common format is optional: referrer and user agent (combined format),
  // then a response time. Anything else custom formats append is ignored.
  cur.spaces();
  const referrer = cur.quoted();
  let useragent: string | null = null;
  if (referrer !== null) {
    cur.spaces();
    useragent = cur.quoted();
    cur.spaces();
  }
  const tail = cur.token();
  const responsetime = tail !== null && isDecimal(tail) ? tail : null;
  return { client, ident, userid, ms: time.ms, zone: time.zone, request, status, bytes, referrer, useragent, responsetime };
}

/** `[dd/MMM/yyyy:HH:mm:ss ±hhmm]` (a colon in the offset is tolerated). */
function scanBracketedTime(cur: LineCursor): { ms: number; zone: string } | null {
  const t = cur.text;
  const p = cur.pos;
  if (t.charCodeAt(p) !== 91 /* [ */) return null;
  const day = digitsAt(t, p + 1, 2);
  const month = monthAbbreviationAt(t, p + 4);
  const year = digitsAt(t, p + 8, 4);
  const hour = digitsAt(t, p + 13, 2);
  const minute = digitsAt(t, p + 16, 2);
  const second = digitsAt(t, p + 19, 2);
  if (
    t.charCodeAt(p + 3) !== 47 /* / */ ||
    t.charCodeAt(p + 7) !== 47 ||
    t.charCodeAt(p + 12) !== 58 /* : */ ||
    t.charCodeAt(p + 15) !== 58 ||
    t.charCodeAt(p + 18) !== 58 ||
    t.charCodeAt(p + 21) !== 32 /* space */ ||
    month === 0
  ) {
    return null;
  }
  const local = utcMillis(year, month, day, hour, minute, second, 0);
  const off = matchOffsetAt(t, p + 22);
  if (local === null || off === null || t.charCodeAt(off.end) !== 93 /* ] */) return null;
  cur.pos = off.end + 1;
  return { ms: local - off.minutes * 60_000, zone: off.text };
}

/**
 * "GET /a?b HTTP/1.1" -> method, url, version. An HTTP/0.9 request has no version; a request that is
 * not "METHOD target…" ("-", or TLS bytes sent to a plain port) yields no request fields at all.
 */
function splitRequest(request: string): { method: string; url: string; httpversion: string | null } | null {
  const firstSpace = request.indexOf(' ');
  if (firstSpace <= 0) return null;
  const method = request.slice(0, firstSpace);
  const rest = request.slice(firstSpace + 1).trim();
  if (rest.length === 0) return null;
  const lastSpace = rest.lastIndexOf(' ');
  if (lastSpace > 0 && rest.startsWith('HTTP/', lastSpace + 1)) {
    return { method, url: rest.slice(0, lastSpace).trimEnd(), httpversion: rest.slice(lastSpace + 6) };
  }
  return { method, url: rest, httpversion: null };
}

function isDigits(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** "12", "0.004", "1.5": the response time formats Apache (%D, %T) and Nginx ($request_time) write. */
function isDecimal(s: string): boolean {
  const dot = s.indexOf('.');
  if (dot < 0) return isDigits(s);
  return isDigits(s.slice(0, dot)) && isDigits(s.slice(dot + 1));
}
