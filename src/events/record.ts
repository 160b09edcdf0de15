/**
 * The payload of one digest-queue record: everything one ingest request adds to one partition.
 *
 *   u32 LE S | msgpack summary (S bytes) | group 0 events | group 1 events | ...
 *
 * summary = `{v, repo, at, groups: [{ds, tags, n, len, b}]}` (n events, `len` encoded bytes and an
 * estimated `b` uncompressed bytes per group).
 *
 * group events, version 2 = the group by column, as UTF-8 JSON:
 * `{"n", "ts": [...], "tz": [...], "raw": [...], "names": [...], "cols": [[value or null, ...], ...]}`
 * (one column per field name, in order of first appearance). By column because a block is built by
 * column: the block worker appends whole columns instead of walking every event's field object
 * (decode plus append went from 2.2 to ~1.2 µs per access-log event), and each field name is
 * written once per request instead of once per event. JSON, not msgpack: V8's native
 * JSON.stringify/parse beat msgpackr by about a third on these arrays of strings.
 *
 * Version 1 (still read, so a queue written before the upgrade digests): a JSON array of
 * `[timestamp, timezone, rawstring, fields]` per event. A section says which it is by its first
 * byte (`[` or `{`).
 *
 * The summary is all the digest's bookkeeping needs (which datasources, how many events, how big),
 * so the main thread never decodes events: a block worker decodes only the group sections it is
 * given. Bump RECORD_VERSION on any change and keep decoding the old ones.
 */
import { LogsvcError } from '../lib/errors.js';
import { pack, unpack } from '../lib/msgpack.js';
import type { IngestEvent } from './event.js';

export const RECORD_VERSION = 2;
/** Record versions this build reads. */
const READABLE_VERSIONS = new Set([1, 2]);

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

/** One group's events by column (a version 2 section as parsed). */
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

function toColumns(events: readonly IngestEvent[]): GroupColumns {
  const n = events.length;
  const ts = new Array<number>(n);
  const tz = new Array<string>(n);
  const raw = new Array<string>(n);
  const index = new Map<string, number>();
  const names: string[] = [];
  const cols: (string | null)[][] = [];
  for (let i = 0; i < n; i++) {
    const e = events[i]!;
    ts[i] = e.timestamp;
    tz[i] = e.timezone;
    raw[i] = e.rawstring;
    const f = e.fields;
    for (const name in f) {
      let j = index.get(name);
      if (j === undefined) {
        index.set(name, (j = names.length));
        names.push(name);
        cols.push(new Array<string | null>(n).fill(null));
      }
      cols[j]![i] = f[name]!;
    }
  }
  return { n, ts, tz, raw, names, cols };
}

function estimateBytes(events: readonly IngestEvent[]): number {
  let n = 0;
  for (const e of events) {
    n += e.rawstring.length + 48;
    for (const k in e.fields) n += k.length + e.fields[k]!.length + 8;
  }
  return n;
}

export function encodeRecord(r: IngestRecord): { payload: Buffer; summary: RecordSummary } {
  const sections = r.groups.map((g) => Buffer.from(JSON.stringify(toColumns(g.events)), 'utf8'));
  const summary: RecordSummary = {
    v: RECORD_VERSION,
    repo: r.repo,
    at: r.at,
    groups: r.groups.map((g, i) => ({ ds: g.ds, tags: g.tags, n: g.events.length, len: sections[i]!.length, b: estimateBytes(g.events) })),
  };
  const head = pack(summary);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length, 0);
  return { payload: Buffer.concat([len, head, ...sections]), summary };
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

/** A group's events by column, from a section of either version. */
export function decodeGroupColumns(section: Uint8Array): GroupColumns {
  const parsed = parseSection(section);
  if (!Array.isArray(parsed)) return checkColumns(parsed);
  const wire = parsed as WireEvent[];
  return toColumns(wire.map((e) => ({ timestamp: e[0], timezone: e[1], rawstring: e[2], fields: e[3] })));
}

/** A group's events one by one (queries over memory), from a section of either version. */
export function decodeGroupEvents(section: Uint8Array): IngestEvent[] {
  const parsed = parseSection(section);
  if (Array.isArray(parsed)) return (parsed as WireEvent[]).map((e) => ({ timestamp: e[0], timezone: e[1], rawstring: e[2], fields: e[3] }));
  const g = checkColumns(parsed);
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
