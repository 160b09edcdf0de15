/**
 * OTLP/HTTP logs (ExportLogsServiceRequest, binary protobuf or JSON), one event per log record,
 * mapped as docs/ingest-doors.md says: the body (a string as it is, any other value as JSON) is
 * @rawstring; `timeUnixNano`, else `observedTimeUnixNano`, else the ingest time is @timestamp (the
 * nanoseconds below the millisecond in `@timestamp.nanos`); resource, scope and record attributes
 * become `resource.attributes.<key>`, `scope.attributes.<key>`, `attributes.<key>` fields (nested
 * values flattened); `severityText`, `severityNumber`, `traceId`, `spanId` (hex), `flags`,
 * `eventName`, `scope.name`, `scope.version` as fields of those names. The token's parser, if it has
 * one, runs on @rawstring; #type is its name, else "otlp". A record that cannot be read is rejected
 * alone (OTLP's partial success); a body that cannot be decoded fails the request.
 */
import { LogsvcError } from '../../lib/errors.js';
import type { EventGroup } from '../../events/index.js';
import { MAX_FIELD_NAME_CHARS, type IngestLimits } from '../limits.js';
import type { CustomParsers } from '../custom-parsing.js';
import { DoorSink } from './common.js';
import { decodeLogsRequest, isInt64, type Int64 } from './otlp-proto.js';

export interface OtlpParams {
  door: 'otlp';
  encoding: 'protobuf' | 'json';
}

export interface OtlpReply {
  rejected: number;
  errorMessage: string;
}

/** A request that is not an ExportLogsServiceRequest at all. */
export class OtlpError extends LogsvcError {}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

class RecordError extends Error {}

export function normalizeOtlp(body: Buffer, p: OtlpParams, tokenParser: string | null, limits: IngestLimits, ingestTs: number, custom?: CustomParsers): { groups: EventGroup[]; reply: OtlpReply } {
  let req: unknown;
  if (p.encoding === 'protobuf') {
    try {
      req = decodeLogsRequest(body);
    } catch (err) {
      const why = err instanceof RangeError && /call stack/i.test(err.message) ? 'values nested too deeply' : (err as Error).message.slice(0, 200);
      throw new OtlpError('E_BAD_REQUEST', `the body is not a protobuf ExportLogsServiceRequest (${why})`);
    }
  } else {
    try {
      req = JSON.parse(body.toString('utf8'));
    } catch (err) {
      throw new OtlpError('E_JSON_MALFORMED', `the body is not JSON (${(err as Error).message.slice(0, 200)})`);
    }
    if (!isObj(req)) throw new OtlpError('E_VALIDATION', 'the body must be a JSON ExportLogsServiceRequest object ({"resourceLogs": [...]})');
  }
  const names = new FieldNames();
  const sink = new DoorSink(limits, ingestTs, custom);
  let rejected = 0;
  let firstError = '';
  const reject = (msg: string): void => {
    rejected++;
    if (firstError === '') firstError = msg;
  };
  const depth = limits.maxJsonDepth;
  list((req as Obj).resourceLogs).forEach((rl, i) => {
    if (!isObj(rl)) return reject(`resourceLogs[${i}] is not an object`);
    const base: Record<string, string> = {};
    try {
      if (isObj(rl.resource)) attributes(base, names.resource, rl.resource.attributes, depth);
      list(rl.scopeLogs).forEach((sl, j) => {
        if (!isObj(sl)) return reject(`resourceLogs[${i}].scopeLogs[${j}] is not an object`);
        const scoped = { ...base };
        if (isObj(sl.scope)) {
          if (typeof sl.scope.name === 'string' && sl.scope.name !== '') scoped['scope.name'] = sl.scope.name;
          if (typeof sl.scope.version === 'string' && sl.scope.version !== '') scoped['scope.version'] = sl.scope.version;
          attributes(scoped, names.scope, sl.scope.attributes, depth);
        }
        list(sl.logRecords).forEach((r, k) => {
          try {
            if (!isObj(r)) throw new RecordError('not an object');
            const fields = { ...scoped };
            const { rawstring, timestamp, nanos } = record(r, fields, names, depth);
            if (nanos !== null) fields['@timestamp.nanos'] = nanos;
            sink.add(tokenParser, { rawstring, fields, timestamp, timezone: 'Z', tags: {}, type: tokenParser ?? 'otlp', parse: tokenParser !== null });
          } catch (err) {
            if (!(err instanceof RecordError)) throw err;
            reject(`resourceLogs[${i}].scopeLogs[${j}].logRecords[${k}]: ${err.message}`);
          }
        });
      });
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      // Resource or scope attributes that cannot be read: every record under them is rejected.
      let n = 0;
      for (const sl of list(rl.scopeLogs)) n += isObj(sl) ? list(sl.logRecords).length : 0;
      rejected += n;
      if (firstError === '') firstError = `resourceLogs[${i}]: ${err.message}`;
    }
  });
  return { groups: sink.list(), reply: { rejected, errorMessage: firstError } };
}

const MAX_MS = 8.64e15;

/**
 * Nanoseconds since the epoch (an Int64 from protobuf, a decimal string or a number from JSON) ->
 * [ms, nanos below the ms]; null for 0/absent. Exact: a string is cut into its digits above and
 * below the millionth (at most 20 digits, so the millisecond part is at most 14: exact in a
 * double), an Int64 divided by halves; no BigInt on the common paths.
 */
function nanosTime(v: unknown, name: string): [number, number] | null {
  if (v === undefined || v === null || v === 0 || v === '0' || v === '') return null;
  let ms: number;
  let nanos: number;
  if (isInt64(v)) {
    // value = high * 2^32 + low, unsigned; 2^32 = 4294 * 10^6 + 967296.
    const high = v.high >>> 0;
    const rest = high * 967_296 + (v.low >>> 0); // < 2^53
    ms = high * 4294 + Math.floor(rest / 1_000_000);
    nanos = rest % 1_000_000;
    if (ms === 0 && nanos === 0) return null;
  } else if (typeof v === 'string' && DIGITS.test(v)) {
    const cut = v.length - 6;
    ms = cut > 0 ? Number(v.slice(0, cut)) : 0;
    nanos = cut > 0 ? Number(v.slice(cut)) : Number(v);
  } else if (typeof v === 'number' && Number.isInteger(v)) {
    const n = BigInt(v);
    ms = Number(n / 1_000_000n);
    // A JSON number past 2^53 (every current time in nanoseconds) is not exact: what it says below
    // the millisecond is rounding, not the sender's nanoseconds.
    nanos = Number.isSafeInteger(v) ? Number(n % 1_000_000n) : 0;
  } else {
    throw new RecordError(`${name} must be nanoseconds since the epoch`);
  }
  if (ms > MAX_MS) throw new RecordError(`${name} is out of range`);
  return [ms, nanos];
}
const DIGITS = /^\d{1,20}$/;

/** The decimal text of a time nanosTime read (what a JSON sender wrote, or the Int64's). */
function nanosText(v: unknown, t: [number, number]): string {
  if (!isInt64(v)) return String(v);
  return t[0] === 0 ? String(t[1]) : `${t[0]}${String(t[1]).padStart(6, '0')}`;
}

/** Trace and span ids: bytes from protobuf, hex (either case) from JSON; lower-case hex. */
function hexId(v: unknown, id: string): string | null {
  if (v instanceof Uint8Array) return v.length === 0 ? null : Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
  if (typeof v !== 'string' || v === '') return null;
  const hex = v.toLowerCase();
  if (!/^[0-9a-f]*$/.test(hex)) throw new RecordError(`${id} must be hex`);
  return hex;
}

function record(r: Obj, fields: Record<string, string>, names: FieldNames, depth: number): { rawstring: string; timestamp: number | null; nanos: string | null } {
  const time = nanosTime(r.timeUnixNano, 'timeUnixNano');
  const observed = nanosTime(r.observedTimeUnixNano, 'observedTimeUnixNano');
  const t = time ?? observed;
  if (observed !== null) fields.observedTimeUnixNano = nanosText(r.observedTimeUnixNano, observed);
  if (typeof r.severityText === 'string' && r.severityText !== '') fields.severityText = r.severityText;
  if (r.severityNumber !== undefined && r.severityNumber !== null && r.severityNumber !== 0) fields.severityNumber = String(r.severityNumber);
  if (typeof r.eventName === 'string' && r.eventName !== '') fields.eventName = r.eventName;
  if (typeof r.flags === 'number' && r.flags !== 0) fields.flags = String(r.flags);
  for (const id of ['traceId', 'spanId'] as const) {
    const hex = hexId(r[id], id);
    if (hex !== null && /[^0]/.test(hex)) fields[id] = hex;
  }
  attributes(fields, names.record, r.attributes, depth);
  let rawstring = '';
  if (r.body !== undefined && r.body !== null) {
    const body = anyValue(r.body, depth);
    if (typeof body === 'string') rawstring = body;
    else {
      rawstring = JSON.stringify(body) ?? '';
      flatten(fields, 'body', body);
    }
  }
  return { rawstring, timestamp: t === null ? null : t[0], nanos: t === null || t[1] === 0 ? null : String(t[1]) };
}

/**
 * The field names of attributes (`attributes.<key>`, ...), made once per key and request: a name
 * joined per record was a new string to hash for every field of every record. Bounded: past
 * NAMES_KEPT keys in one request the rest are joined each time.
 */
const NAMES_KEPT = 4096;
class NameCache {
  private readonly names = new Map<string, string>();
  constructor(readonly prefix: string) {}
  of(key: string): string {
    let name = this.names.get(key);
    if (name === undefined) {
      name = this.prefix + key;
      if (this.names.size < NAMES_KEPT) this.names.set(key, name);
    }
    return name;
  }
}

class FieldNames {
  readonly resource = new NameCache('resource.attributes.');
  readonly scope = new NameCache('scope.attributes.');
  readonly record = new NameCache('attributes.');
}

type Plain = string | number | boolean | null | Plain[] | { [k: string]: Plain };

/** An OTLP AnyValue ({stringValue} | {intValue} | ... | {kvlistValue: {values}}) as plain JSON. */
function anyValue(v: unknown, depth: number): Plain {
  if (depth <= 0) throw new RecordError('values nested too deeply');
  if (!isObj(v)) return null;
  if (typeof v.stringValue === 'string') return v.stringValue;
  if (typeof v.boolValue === 'boolean') return v.boolValue;
  if (v.intValue !== undefined && v.intValue !== null) return intValue(v.intValue);
  if (v.doubleValue !== undefined && v.doubleValue !== null) return typeof v.doubleValue === 'number' ? v.doubleValue : Number(v.doubleValue);
  if (typeof v.bytesValue === 'string') return v.bytesValue;
  // Bytes from protobuf are shown as OTLP/JSON writes them: base64.
  if (v.bytesValue instanceof Uint8Array) return Buffer.from(v.bytesValue.buffer, v.bytesValue.byteOffset, v.bytesValue.byteLength).toString('base64');
  if (isObj(v.arrayValue)) return list(v.arrayValue.values).map((x) => anyValue(x, depth - 1));
  if (isObj(v.kvlistValue)) {
    const o: { [k: string]: Plain } = {};
    for (const kv of list(v.kvlistValue.values)) if (isObj(kv) && typeof kv.key === 'string') o[kv.key] = anyValue(kv.value, depth - 1);
    return o;
  }
  return null;
}

/**
 * An int64: a number where it is exact in one, else its decimal string. OTLP/JSON writes int64 as
 * a string or a number, and protobuf gives an Int64: all come out the same (a kvlist body's
 * @rawstring holds `"n":3` whichever encoding carried it).
 */
function intValue(v: unknown): Plain {
  if (typeof v === 'number') return v;
  if (isInt64(v)) {
    // Exact when the value is: high * 2^32 is, and so is the sum below 2^53.
    const n = (v.unsigned ? v.high >>> 0 : v.high) * 4294967296 + (v.low >>> 0);
    return Number.isSafeInteger(n) ? n : (v as Int64).toString();
  }
  const s = String(v);
  if (/^-?\d{1,16}$/.test(s)) {
    const n = Number(s);
    if (Number.isSafeInteger(n) && String(n) === s) return n;
  }
  return s;
}

function flatten(fields: Record<string, string>, name: string, v: Plain): void {
  if (v === null || name.length > MAX_FIELD_NAME_CHARS) return;
  if (Array.isArray(v)) v.forEach((x, i) => flatten(fields, `${name}[${i}]`, x));
  else if (typeof v === 'object') for (const k of Object.keys(v)) flatten(fields, `${name}.${k}`, v[k]!);
  else fields[name] = String(v);
}

function attributes(fields: Record<string, string>, names: NameCache, attrs: unknown, depth: number): void {
  for (const kv of list(attrs)) {
    if (!isObj(kv) || typeof kv.key !== 'string' || kv.key === '') continue;
    const name = names.of(kv.key);
    const v = anyValue(kv.value, depth);
    // Most attributes are strings: set here, without the walk.
    if (typeof v === 'string' && name.length <= MAX_FIELD_NAME_CHARS) fields[name] = v;
    else flatten(fields, name, v);
  }
}
