/**
 * The built-in `syslog` parser, tolerant of both formats seen in the wild:
 * RFC 5424 `<PRI>1 TIMESTAMP HOST APP PROCID MSGID STRUCTURED-DATA MSG` ("-" means absent;
 * `[id k="v"]` elements become fields `id.k`) and RFC 3164 `<PRI>Mmm dd hh:mm:ss HOST TAG[pid]: MSG`
 * (the <PRI> and the host may be missing; rsyslog's forwarding format puts an ISO 8601 timestamp in
 * place of the BSD one). key=value pairs in the message are added without replacing syslog fields.
 *
 * RFC 3164 timestamps carry no year and no zone: they are read as UTC, in the year that puts them
 * closest to now without being more than a day ahead, so the parser takes a Clock.
 */
import { type Clock, systemClock } from '../../lib/clock.js';
import { describeError } from '../../lib/errors.js';
import { digitsAt, matchIsoTimestampAt, monthAbbreviationAt, utcMillis } from '../timestamps.js';
import { isDigit, isWhitespace } from './chars.js';
import { FieldSink } from './field-sink.js';
import { extractKeyValues } from './kv-pairs.js';
import { LineCursor } from './line-cursor.js';
import type { BuiltInParser, ParseResult } from './parser.js';

const MS_PER_DAY = 86_400_000;
/** PRI is facility * 8 + severity with facilities 0-23. */
const MAX_PRI = 191;
/** How far back to look for a year in which "Feb 29" exists (2100 is not a leap year). */
const MAX_YEARS_BACK = 8;

interface Header {
  ms: number | null;
  zone: string | null;
}

export class SyslogParser implements BuiltInParser {
  readonly name = 'syslog';

  constructor(private readonly clock: Clock = systemClock) {}

  parse(rawstring: string, maxFields: number): ParseResult {
    const sink = new FieldSink(maxFields);
    try {
      const cur = new LineCursor(rawstring);
      cur.spaces();
      const pri = scanPri(cur);
      if (pri === INVALID_PRI) return failure('invalid <PRI>');
      if (pri !== NO_PRI) {
        sink.set('priority', String(pri));
        sink.set('facility', String(pri >> 3));
        sink.set('severity', String(pri & 7));
      }
      let header: Header | string;
      if (pri !== NO_PRI && scanVersion(cur)) header = scanRfc5424(cur, sink);
      else header = scanRfc3164(cur, sink, this.clock.now());
      if (typeof header === 'string') return failure(header);
      const message = sink.fields['message'];
      if (message !== undefined && !sink.full) extractKeyValues(message, 0, sink, false);
      return { timestamp: header.ms, timezone: header.zone, fields: sink.fields, error: null, fieldsTruncated: sink.full };
    } catch (err) {
      return { timestamp: null, timezone: null, fields: sink.fields, error: `syslog: ${describeError(err)}` };
    }
  }
}

function failure(what: string): ParseResult {
  return { timestamp: null, timezone: null, fields: {}, error: `not a syslog line: ${what}` };
}

/** HOSTNAME APP-NAME PROCID MSGID, in order, under the names the product gives them. */
const RFC5424_HEADER_FIELDS = ['host', 'app', 'pid', 'msgid'] as const;

const NO_PRI = -1;
const INVALID_PRI = -2;

/** `<0>`..`<191>`; NO_PRI when the line does not start with "<". */
function scanPri(cur: LineCursor): number {
  if (!cur.eat(60 /* < */)) return NO_PRI;
  let pri = 0;
  let n = 0;
  while (n < 3 && isDigit(cur.peek())) {
    pri = pri * 10 + (cur.peek() - 48);
    cur.pos++;
    n++;
  }
  if (n === 0 || !cur.eat(62 /* > */) || pri > MAX_PRI) return INVALID_PRI;
  return pri;
}

/** RFC 5424's VERSION: 1-2 digits, not starting with 0, then a space. Consumes only on success. */
function scanVersion(cur: LineCursor): boolean {
  const t = cur.text;
  const p = cur.pos;
  if (!isDigit(t.charCodeAt(p)) || t.charCodeAt(p) === 48) return false;
  const len = isDigit(t.charCodeAt(p + 1)) ? 2 : 1;
  if (t.charCodeAt(p + len) !== 32) return false;
  cur.pos = p + len + 1;
  return true;
}

function scanRfc5424(cur: LineCursor, sink: FieldSink): Header | string {
  let header: Header = { ms: null, zone: null };
  if (!cur.eat(45 /* - */)) {
    const m = matchIsoTimestampAt(cur.text, cur.pos);
    if (m === null || !endsToken(cur.text, m.end)) return 'invalid RFC 5424 timestamp';
    // The RFC requires an offset; a sender that leaves it out almost always means UTC.
    header = { ms: m.ms, zone: m.zone ?? 'Z' };
    cur.pos = m.end;
  }
  for (const name of RFC5424_HEADER_FIELDS) {
    if (!cur.spaces()) return 'truncated RFC 5424 header';
    const value = cur.token();
    if (value === null) return 'truncated RFC 5424 header';
    if (value !== '-') sink.set(name, value);
  }
  if (!cur.spaces()) return cur.atEnd() ? header : 'truncated RFC 5424 header';
  if (!cur.eat(45 /* - */) && !scanStructuredData(cur, sink)) return 'malformed RFC 5424 structured data';
  cur.eat(32);
  if (!cur.atEnd()) {
    let message = cur.rest();
    if (message.charCodeAt(0) === 0xfeff) message = message.slice(1);
    if (message.length > 0) sink.set('message', message);
  }
  return header;
}

/**
 * One or more `[id name="value" …]` elements. Inside values `\"`, `\\` and `\]` are escapes (RFC 5424
 * §6.3.3); any other backslash is kept.
 */
function scanStructuredData(cur: LineCursor, sink: FieldSink): boolean {
  if (cur.peek() !== 91 /* [ */) return false;
  while (cur.eat(91)) {
    const id = sdName(cur);
    if (id === null) return false;
    for (;;) {
      if (cur.eat(93 /* ] */)) break;
      if (!cur.spaces()) return false;
      const name = sdName(cur);
      if (name === null || !cur.eat(61 /* = */) || !cur.eat(34 /* " */)) return false;
      const value = sdValue(cur);
      if (value === null) return false;
      // Past the field limit the rest is still scanned: a malformed element must fail the line.
      if (!sink.full) sink.set(`${id}.${name}`, value);
    }
  }
  return true;
}

/** SD-NAME: printable ASCII except '=', ' ', ']' and '"'. */
function sdName(cur: LineCursor): string | null {
  const start = cur.pos;
  for (;;) {
    const c = cur.peek();
    if (c <= 32 || c > 126 || c === 61 || c === 93 || c === 34) break;
    cur.pos++;
  }
  return cur.pos > start ? cur.text.slice(start, cur.pos) : null;
}

/** A PARAM-VALUE after its opening quote, through the closing one. */
function sdValue(cur: LineCursor): string | null {
  const t = cur.text;
  let out = '';
  let segment = cur.pos;
  for (let i = cur.pos; i < cur.end; i++) {
    const c = t.charCodeAt(i);
    if (c === 34) {
      cur.pos = i + 1;
      return out + t.slice(segment, i);
    }
    if (c === 92 && i + 1 < cur.end) {
      const next = t.charCodeAt(i + 1);
      if (next === 34 || next === 92 || next === 93) {
        out += t.slice(segment, i);
        segment = i + 1;
        i++;
      }
    }
  }
  return null;
}

function scanRfc3164(cur: LineCursor, sink: FieldSink, now: number): Header | string {
  let header: Header;
  const iso = isDigit(cur.peek()) ? matchIsoTimestampAt(cur.text, cur.pos) : null;
  if (iso !== null && endsToken(cur.text, iso.end)) {
    header = { ms: iso.ms, zone: iso.zone ?? 'Z' };
    cur.pos = iso.end;
  } else {
    const ms = scanBsdTimestamp(cur, now);
    if (ms === null) return 'expected <PRI>, an RFC 3164 "Mmm dd hh:mm:ss" or an ISO 8601 timestamp';
    header = { ms, zone: 'Z' };
  }
  if (!cur.spaces()) return cur.atEnd() ? header : 'expected a space after the timestamp';

  // HOST is optional in practice: "su: 'su root' failed" has only a TAG. A first token shaped like
  // a tag ("name:" or "name[pid]:") is taken as one.
  let tag = cur.token();
  if (tag !== null && !setTag(tag, sink)) {
    sink.set('host', tag);
    cur.spaces();
    const mark = cur.pos;
    tag = cur.token();
    if (tag !== null && !setTag(tag, sink)) cur.pos = mark;
  }
  cur.spaces();
  if (!cur.atEnd()) sink.set('message', cur.rest());
  return header;
}

/** `Mmm dd hh:mm:ss` (day space-padded or not; a fraction of a second is tolerated) -> ms UTC. */
function scanBsdTimestamp(cur: LineCursor, now: number): number | null {
  const t = cur.text;
  let p = cur.pos;
  const month = monthAbbreviationAt(t, p);
  if (month === 0 || t.charCodeAt(p + 3) !== 32) return null;
  p += 4;
  if (t.charCodeAt(p) === 32) p++;
  let day = digitsAt(t, p, 2);
  if (day >= 0) p += 2;
  else {
    day = digitsAt(t, p, 1);
    if (day < 0) return null;
    p += 1;
  }
  if (t.charCodeAt(p) !== 32 || t.charCodeAt(p + 3) !== 58 || t.charCodeAt(p + 6) !== 58) return null;
  const hour = digitsAt(t, p + 1, 2);
  const minute = digitsAt(t, p + 4, 2);
  const second = digitsAt(t, p + 7, 2);
  if (hour < 0 || minute < 0 || second < 0) return null;
  p += 9;
  let millis = 0;
  if (t.charCodeAt(p) === 46 /* . */ && isDigit(t.charCodeAt(p + 1))) {
    let n = 0;
    for (p++; isDigit(t.charCodeAt(p)); p++, n++) {
      if (n < 3) millis = millis * 10 + (t.charCodeAt(p) - 48);
    }
    for (; n < 3; n++) millis *= 10;
  }
  if (!endsToken(t, p)) return null;
  const ms = inferYear(month, day, hour, minute, second, millis, now);
  if (ms !== null) cur.pos = p;
  return ms;
}

/**
 * The year is not in the line: pick the one that puts the time closest to `now` without being more
 * than a day ahead (clock skew, zones east of UTC). Late-December lines read in January land in the
 * previous year; "Feb 29" walks back to the last leap year.
 */
function inferYear(
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  millis: number,
  now: number,
): number | null {
  const year = new Date(now).getUTCFullYear();
  for (let y = year + 1; y >= year - MAX_YEARS_BACK; y--) {
    const ms = utcMillis(y, month, day, hour, minute, second, millis);
    if (ms !== null && ms <= now + MS_PER_DAY) return ms;
  }
  return null;
}

/** Sets app (and pid) from a TAG token "name:" or "name[pid]:"; false when the token is not one. */
function setTag(token: string, sink: FieldSink): boolean {
  if (token.length < 2 || token.charCodeAt(token.length - 1) !== 58 /* : */) return false;
  const body = token.slice(0, -1);
  const open = body.indexOf('[');
  if (open < 0) {
    sink.set('app', body);
    return true;
  }
  if (open === 0 || body.charCodeAt(body.length - 1) !== 93 /* ] */) return false;
  sink.set('app', body.slice(0, open));
  const pid = body.slice(open + 1, -1);
  if (pid.length > 0) sink.set('pid', pid);
  return true;
}

/** True when position `p` ends a token (whitespace or the end of the text). */
function endsToken(text: string, p: number): boolean {
  return p >= text.length || isWhitespace(text.charCodeAt(p));
}
