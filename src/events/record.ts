/**
 * The payload of one digest-queue record: everything one ingest request adds to one partition.
 *
 *   u32 LE S | msgpack summary (S bytes) | group 0 events | group 1 events | ...
 *
 * summary = `{v, repo, at, groups: [{ds, tags, n, len, b}]}` (n events, `len` encoded bytes and an
 * estimated `b` uncompressed bytes per group).
 *
 * group events, version 3 = the group by column, binary, all little-endian:
 *
 *   u8 3 | u32 n | u32 h | h bytes: JSON array of the field names (in order of first appearance)
 *   | f64 x n: timestamps | u32 x n*(2+names): string lengths | the strings' UTF-8, back to back
 *
 * The strings are the n time zones, then the n raw strings, then each field column in names order
 * (n values each); a length is 0 for an absent value (an event without that field), else the
 * value's length in UTF-16 units + 1. By column because a block is built by column: the block
 * worker appends whole columns instead of walking every event's field object. One run of text
 * because that is the cheapest thing for both ends: the encoder joins the strings once and writes
 * one UTF-8 buffer, the decoder decodes it once and slices it; on the access-log dataset that
 * took the record encode from 1.6 to 0.8 µs per event and the decode from 1.2 to 0.4 against the
 * JSON of version 2 (docs/benchmarks.md). A lone surrogate, which UTF-8 cannot hold, comes back as
 * U+FFFD: one UTF-16 unit for one, so the lengths still hold, and what segments store anyway.
 *
 * Still read, so a queue written before an upgrade digests: version 2, the same columns as UTF-8
 * JSON `{"n", "ts", "tz", "raw", "names", "cols"}`, and version 1, a JSON array of
 * `[timestamp, timezone, rawstring, fields]` per event. A section says which it is by its first
 * byte (3, `{` or `[`).
 *
 * The summary is all the digest's bookkeeping needs (which datasources, how many events, how big),
 * so the main thread never decodes events: a block worker decodes only the group sections it is
 * given. Bump RECORD_VERSION on any change and keep decoding the old ones.
 */
import { LogsvcError } from '../lib/errors.js';
import { pack, unpack } from '../lib/msgpack.js';
import type { IngestEvent } from './event.js';

export const RECORD_VERSION = 3;
/** Record versions this build reads. */
const READABLE_VERSIONS = new Set([1, 2, 3]);
/** First byte of a version 3 section. */
const BINARY_SECTION = 3;
/** Bytes of a version 3 section before the names: version, n, names length. */
const BINARY_HEAD = 9;
/** Texts longer than this (UTF-16 units) are measured before their buffer is allocated. */
const MEASURE_TEXT_FROM = 1 << 20;

export interface RecordGroup {
  /** Datasource id (datasource.ts). */
  ds: string;
  tags: Record<string, string>;
  events: IngestEvent[];
}

export interface IngestRecord {
  repo: string;
  /** When the node accepted the request (ms UTC): the events' @ingesttimestamp. */
  at: number;
  groups: RecordGroup[];
}

export interface GroupSummary {
  ds: string;
  tags: Record<string, string>;
  /** Events in the group. */
  n: number;
  /** Bytes of the group's encoded events. */
  len: number;
  /** Estimated uncompressed size of the events (raw strings, field names and values, 48 per event): block sizing. */
  b: number;
}

export interface RecordSummary {
  v: number;
  repo: string;
  at: number;
  groups: GroupSummary[];
}

type WireEvent = [number, string, string, Record<string, string>];

/** One group's events by column (a section as decoded). */
export interface GroupColumns {
  n: number;
  ts: number[];
  tz: string[];
  raw: string[];
  /** Field names; a Map would do too, but names are data ("__proto__" included), and arrays are what JSON gives. */
  names: string[];
  /** Per name, the values by event (null where the event lacks the field). */
  cols: (string | null)[][];
}

/**
 * Most strings (lengths) one section may have: events x (2 + field names). A section is dense (a
 * length for every event and name), so a request whose events each bring new names grows with
 * their product: 3,000 events of 1,000 names of their own would be 3 x 10^9 slots, and memory runs
 * out long before the record's size bound is checked. 16 Mi lengths are 64 MiB, half of what a
 * record may hold. native/structured_ingest.cc has the same bound (kMaxStrings).
 */
export const MAX_SECTION_STRINGS = 16 * 1024 * 1024;

/** The refusal of a request whose `events` events of one datasource bring `names` distinct field names. */
export function sectionTooLarge(events: number, names: number): LogsvcError {
  return new LogsvcError('E_BODY_TOO_LARGE', `the request's ${events} events of one datasource have more than ${names - 1} distinct field names: ${events} x ${names} values is more than one record may hold (${MAX_SECTION_STRINGS}); split the request`);
}

/**
 * The events by column, and their estimated size (GroupSummary.b), in one walk; at most
 * `maxStrings` lengths (E_BODY_TOO_LARGE past them).
 */
function toColumns(events: readonly IngestEvent[], maxStrings = Infinity): { columns: GroupColumns; bytes: number } {
  const n = events.length;
  const ts = new Array<number>(n);
  const tz = new Array<string>(n);
  const raw = new Array<string>(n);
  const index = new Map<string, number>();
  const names: string[] = [];
  const cols: (string | null)[][] = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const e = events[i]!;
    ts[i] = e.timestamp;
    tz[i] = e.timezone;
    raw[i] = e.rawstring;
    bytes += e.rawstring.length + 48;
    const f = e.fields;
    for (const name in f) {
      let j = index.get(name);
      if (j === undefined) {
        if (n * (names.length + 3) > maxStrings) throw sectionTooLarge(n, names.length + 1);
        index.set(name, (j = names.length));
        names.push(name);
        cols.push(new Array<string | null>(n).fill(null));
      }
      const v = f[name]!;
      cols[j]![i] = v;
      bytes += name.length + v.length + 8;
    }
  }
  return { columns: { n, ts, tz, raw, names, cols }, bytes };
}

/** A group's events as a version 3 section (see the top of this file). */
function encodeSection(c: GroupColumns): Buffer {
  const n = c.n;
  const strings = n * (2 + c.names.length);
  const names = Buffer.from(JSON.stringify(c.names), 'utf8');
  const parts = new Array<string>(strings);
  const lengthsAt = BINARY_HEAD + names.length + n * 8;
  const textAt = lengthsAt + strings * 4;
  let k = 0;
  let units = 0;
  // Lengths are written once the buffer exists; until then they wait here.
  const lengths = new Uint32Array(strings);
  for (let i = 0; i < n; i++) {
    const v = c.tz[i]!;
    lengths[k] = v.length + 1;
    parts[k++] = v;
    units += v.length;
  }
  for (let i = 0; i < n; i++) {
    const v = c.raw[i]!;
    lengths[k] = v.length + 1;
    parts[k++] = v;
    units += v.length;
  }
  for (const col of c.cols) {
    for (let i = 0; i < n; i++) {
      const v = col[i];
      if (v === null || v === undefined) {
        lengths[k] = 0;
        parts[k++] = '';
      } else {
        lengths[k] = v.length + 1;
        parts[k++] = v;
        units += v.length;
      }
    }
  }
  const text = parts.join('');
  // At most 3 UTF-8 bytes per UTF-16 unit: room for a small text without measuring it first; a
  // large one is measured, so that a big request does not hold three times its text.
  const out = Buffer.allocUnsafe(textAt + (units <= MEASURE_TEXT_FROM ? units * 3 : Buffer.byteLength(text, 'utf8')));
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  out[0] = BINARY_SECTION;
  view.setUint32(1, n, true);
  view.setUint32(5, names.length, true);
  out.set(names, BINARY_HEAD);
  let pos = BINARY_HEAD + names.length;
  for (let i = 0; i < n; i++, pos += 8) view.setFloat64(pos, c.ts[i]!, true);
  for (let q = 0; q < strings; q++, pos += 4) view.setUint32(pos, lengths[q]!, true);
  const written = out.write(text, textAt, 'utf8');
  return out.subarray(0, textAt + written);
}

export function encodeRecord(r: IngestRecord): { payload: Buffer; summary: RecordSummary } {
  return assembleRecord(
    r.repo,
    r.at,
    r.groups.map((g) => {
      const built = toColumns(g.events, MAX_SECTION_STRINGS);
      return { ds: g.ds, tags: g.tags, n: g.events.length, b: built.bytes, section: encodeSection(built.columns) };
    }),
  );
}

/** A group whose events are already a section (version 3): what the native structured parser makes. */
export interface EncodedGroup {
  ds: string;
  tags: Record<string, string>;
  n: number;
  /** GroupSummary.b of the events. */
  b: number;
  section: Uint8Array;
}

/** The record of groups already encoded. */
export function assembleRecord(repo: string, at: number, groups: readonly EncodedGroup[]): { payload: Buffer; summary: RecordSummary } {
  const summary: RecordSummary = {
    v: RECORD_VERSION,
    repo,
    at,
    groups: groups.map((g) => ({ ds: g.ds, tags: g.tags, n: g.n, len: g.section.length, b: g.b })),
  };
  const head = pack(summary);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length, 0);
  return { payload: Buffer.concat([len, head, ...groups.map((g) => g.section)]), summary };
}

export function readSummary(payload: Uint8Array): RecordSummary {
  const buf = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  if (buf.length < 4) throw new LogsvcError('E_STATE_CORRUPT', 'digest queue record is too short');
  const s = unpack(buf.subarray(4, 4 + buf.readUInt32LE(0))) as RecordSummary | null;
  if (s === null || typeof s !== 'object' || !READABLE_VERSIONS.has(s.v)) {
    throw new LogsvcError('E_STATE_CORRUPT', `digest queue record has unsupported version ${String((s as { v?: unknown } | null)?.v)}`);
  }
  return s;
}

/** The encoded events of group `index` (a view into `payload`). */
export function groupSection(payload: Uint8Array, summary: RecordSummary, index: number): Uint8Array {
  const buf = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  let pos = 4 + buf.readUInt32LE(0);
  for (let i = 0; i < index; i++) pos += summary.groups[i]!.len;
  const len = summary.groups[index]!.len;
  if (pos + len > buf.length) throw new LogsvcError('E_STATE_CORRUPT', 'digest queue record is shorter than its summary says');
  return buf.subarray(pos, pos + len);
}

function parseSection(section: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(section.buffer, section.byteOffset, section.byteLength).toString('utf8'));
  } catch (err) {
    throw new LogsvcError('E_STATE_CORRUPT', `digest queue record section does not decode: ${(err as Error).message}`);
  }
}

function checkColumns(c: unknown): GroupColumns {
  const g = c as Partial<GroupColumns> | null;
  const ok =
    g !== null &&
    typeof g === 'object' &&
    typeof g.n === 'number' &&
    Array.isArray(g.ts) && g.ts.length === g.n &&
    Array.isArray(g.tz) && g.tz.length === g.n &&
    Array.isArray(g.raw) && g.raw.length === g.n &&
    Array.isArray(g.names) && Array.isArray(g.cols) && g.cols.length === g.names.length &&
    g.cols.every((col) => Array.isArray(col) && col.length === g.n);
  if (!ok) throw new LogsvcError('E_STATE_CORRUPT', 'digest queue record section is not a valid group of columns');
  return g as GroupColumns;
}

function corrupt(what: string): LogsvcError {
  return new LogsvcError('E_STATE_CORRUPT', `digest queue record section: ${what}`);
}

/** A version 3 section's columns, every length checked against the section's size. */
function decodeBinarySection(section: Uint8Array): GroupColumns {
  const buf = Buffer.from(section.buffer, section.byteOffset, section.byteLength);
  if (buf.length < BINARY_HEAD) throw corrupt('shorter than its header');
  const n = buf.readUInt32LE(1);
  const namesEnd = BINARY_HEAD + buf.readUInt32LE(5);
  if (namesEnd > buf.length) throw corrupt('shorter than its field names');
  let names: unknown;
  try {
    names = JSON.parse(buf.toString('utf8', BINARY_HEAD, namesEnd));
  } catch (err) {
    throw corrupt(`field names do not decode: ${(err as Error).message}`);
  }
  if (!Array.isArray(names) || !names.every((x) => typeof x === 'string')) throw corrupt('field names are not a list of strings');
  if (new Set(names).size !== names.length) throw corrupt('a field name repeats');
  const strings = n * (2 + names.length);
  const lengthsAt = namesEnd + n * 8;
  const textAt = lengthsAt + strings * 4;
  if (textAt > buf.length) throw corrupt(`too short for ${n} events of ${names.length} fields`);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const ts = new Array<number>(n);
  for (let i = 0; i < n; i++) ts[i] = view.getFloat64(namesEnd + i * 8, true);
  const text = buf.toString('utf8', textAt);
  let at = 0;
  let k = lengthsAt;
  const tz = new Array<string>(n);
  const raw = new Array<string>(n);
  for (let i = 0; i < 2 * n; i++, k += 4) {
    const len = view.getUint32(k, true);
    const end = at + len - 1;
    if (len === 0) throw corrupt(`an event has no ${i < n ? 'time zone' : 'raw string'}`);
    if (end > text.length) throw corrupt('its text is shorter than its lengths say');
    if (i < n) tz[i] = text.slice(at, end);
    else raw[i - n] = text.slice(at, end);
    at = end;
  }
  const cols = new Array<(string | null)[]>(names.length);
  for (let j = 0; j < names.length; j++) {
    const col = new Array<string | null>(n);
    for (let i = 0; i < n; i++, k += 4) {
      const len = view.getUint32(k, true);
      if (len === 0) {
        col[i] = null;
        continue;
      }
      const end = at + len - 1;
      if (end > text.length) throw corrupt('its text is shorter than its lengths say');
      col[i] = text.slice(at, end);
      at = end;
    }
    cols[j] = col;
  }
  if (at !== text.length) throw corrupt('its text is longer than its lengths say');
  return { n, ts, tz, raw, names: names as string[], cols };
}

/** A group's events by column, from a section of any version. */
export function decodeGroupColumns(section: Uint8Array): GroupColumns {
  if (section[0] === BINARY_SECTION) return decodeBinarySection(section);
  const parsed = parseSection(section);
  if (!Array.isArray(parsed)) return checkColumns(parsed);
  const wire = parsed as WireEvent[];
  return toColumns(wire.map((e) => ({ timestamp: e[0], timezone: e[1], rawstring: e[2], fields: e[3] }))).columns;
}

/** A group's events one by one (queries over memory), from a section of any version. */
export function decodeGroupEvents(section: Uint8Array): IngestEvent[] {
  let g: GroupColumns;
  if (section[0] === BINARY_SECTION) g = decodeBinarySection(section);
  else {
    const parsed = parseSection(section);
    if (Array.isArray(parsed)) return (parsed as WireEvent[]).map((e) => ({ timestamp: e[0], timezone: e[1], rawstring: e[2], fields: e[3] }));
    g = checkColumns(parsed);
  }
  const out = new Array<IngestEvent>(g.n);
  for (let i = 0; i < g.n; i++) {
    const fields: Record<string, string> = {};
    for (let j = 0; j < g.names.length; j++) {
      const v = g.cols[j]![i];
      if (v === null || v === undefined) continue;
      const name = g.names[j]!;
      // A field named "__proto__" must be an own field, as JSON.parse makes it, not the prototype.
      if (name === '__proto__') Object.defineProperty(fields, name, { value: v, enumerable: true, writable: true, configurable: true });
      else fields[name] = v;
    }
    out[i] = { timestamp: g.ts[i]!, timezone: g.tz[i]!, rawstring: g.raw[i]!, fields };
  }
  return out;
}

export function decodeRecord(payload: Uint8Array): IngestRecord {
  const s = readSummary(payload);
  return {
    repo: s.repo,
    at: s.at,
    groups: s.groups.map((g, i) => ({ ds: g.ds, tags: g.tags, events: decodeGroupEvents(groupSection(payload, s, i)) })),
  };
}
