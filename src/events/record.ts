/**
 * The payload of one digest-queue record: everything one ingest request adds to one partition.
 * msgpack of `{v, repo, at, groups: [{ds, tags, events: [[timestamp, timezone, rawstring, fields]]}]}`.
 * Events are arrays, not objects, to keep records small and decoding fast. Bump RECORD_VERSION on any
 * change and keep decoding the old one.
 */
import { LogsvcError } from '../lib/errors.js';
import { pack, unpack } from '../lib/msgpack.js';
import type { IngestEvent } from './event.js';

export const RECORD_VERSION = 1;

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

type WireEvent = [number, string, string, Record<string, string>];

/**
 * msgpackr renames a "__proto__" key on decoding (prototype-pollution guard), so a fields object
 * holding one travels as `{"\u0000": [k1, v1, k2, v2, ...]}` instead. Only such events pay for it.
 */
const ESCAPE = '\u0000';

function wireFields(f: Record<string, string>): Record<string, string> {
  if (!Object.hasOwn(f, '__proto__') && !Object.hasOwn(f, ESCAPE)) return f;
  const flat: string[] = [];
  for (const k of Object.keys(f)) flat.push(k, f[k]!);
  return { [ESCAPE]: flat } as unknown as Record<string, string>;
}

function readFields(f: Record<string, string>): Record<string, string> {
  if (!Object.hasOwn(f, ESCAPE)) return f;
  const flat = (f as unknown as Record<string, string[]>)[ESCAPE]!;
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) Object.defineProperty(out, flat[i]!, { value: flat[i + 1], enumerable: true, writable: true, configurable: true });
  return out;
}
interface WireRecord {
  v: number;
  repo: string;
  at: number;
  groups: { ds: string; tags: Record<string, string>; events: WireEvent[] }[];
}

export function encodeRecord(r: IngestRecord): Buffer {
  const wire: WireRecord = {
    v: RECORD_VERSION,
    repo: r.repo,
    at: r.at,
    groups: r.groups.map((g) => ({ ds: g.ds, tags: g.tags, events: g.events.map((e) => [e.timestamp, e.timezone, e.rawstring, wireFields(e.fields)] as WireEvent) })),
  };
  return pack(wire);
}

export function decodeRecord(payload: Uint8Array): IngestRecord {
  const w = unpack(payload) as WireRecord;
  if (w === null || typeof w !== 'object' || w.v !== RECORD_VERSION) {
    throw new LogsvcError('E_STATE_CORRUPT', `digest queue record has unsupported version ${String((w as { v?: unknown } | null)?.v)}`);
  }
  return {
    repo: w.repo,
    at: w.at,
    groups: w.groups.map((g) => ({
      ds: g.ds,
      tags: g.tags,
      events: g.events.map((e) => ({ timestamp: e[0], timezone: e[1], rawstring: e[2], fields: readFields(e[3]) })),
    })),
  };
}
