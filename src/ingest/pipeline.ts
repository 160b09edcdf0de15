/**
 * The CPU part of an ingest request, as one pure synchronous function: decompress (capped), parse
 * JSON (depth-bounded), normalize (structured / unstructured / raw with the right parser), group by
 * datasource and encode the queue record. It runs on a worker thread for large bodies and inline for
 * small ones (src/http/routes/ingest.ts decides); either way the main thread gets bytes and a
 * summary, never parsed events. Structured bodies without a parser go through the native parser
 * first (native-structured.ts); what it declines, and every error, takes the JavaScript path.
 */
import { gunzipSync, inflateSync } from 'node:zlib';
import { LogsvcError, type ErrorCode } from '../lib/errors.js';
import { parseJsonBounded } from '../lib/json.js';
import { assembleRecord, datasourceId, encodeRecord, type EventGroup, type RecordGroup, type RecordSummary } from '../events/index.js';
import type { IngestLimits } from './limits.js';
import { MAX_RECORD_BYTES } from '../queue/queue-file.js';
import { builtInParser } from './parsers/index.js';
import { normalizeStructured } from './structured.js';
import { normalizeRaw, normalizeUnstructured } from './unstructured.js';
import { CustomParsers } from './custom-parsing.js';
import type { CustomParserDef, ParserTimeLimits } from '../parsers/custom-parser.js';
import { isParserSet, type ParserSet } from '../parsers/parser-set.js';
import { fitDatasources, type DatasourceRoom } from './datasource-room.js';
import { parseDoorNatively, parseStructuredNatively } from './native-structured.js';
import { runDoor, type DoorParams, type DoorReply } from './doors/index.js';
import { newIdPrefix } from './doors/elastic-bulk.js';

/** 'door': a shipper protocol (HEC, Elasticsearch bulk, OTLP, listener lines), named by `door`. */
export type IngestKind = 'structured' | 'unstructured' | 'raw' | 'door';

export interface IngestTask {
  kind: IngestKind;
  body: Uint8Array;
  contentEncoding: string | undefined;
  maxDecompressedBytes: number;
  limits: IngestLimits;
  /** The ingest token's parser, if the request used one. */
  parser: string | null;
  repositoryId: string;
  at: number;
  /**
   * The repository's custom parsers that may apply (the token's, or for unstructured bodies every
   * one an item's `type` may name), and their time bounds.
   */
  customParsers?: CustomParserDef[] | ParserSet;
  /** With custom parsers: the room for new datasources their tags may take (datasource-room.ts). */
  datasourceRoom?: DatasourceRoom;
  parserLimits?: ParserTimeLimits;
  /** With kind 'door': which door and its parameters (src/ingest/doors/). */
  door?: DoorParams;
}

/** Used when a task carries custom parsers without limits (tests). */
const DEFAULT_PARSER_LIMITS: ParserTimeLimits = { maxRequestMs: 10_000 };

export type IngestTaskResult =
  | { ok: true; payload: Uint8Array; summary: RecordSummary; events: number; reply?: DoorReply }
  | { ok: false; code: ErrorCode; message: string; detail?: unknown };

function decompress(body: Buffer, encoding: string | undefined, cap: number): Buffer {
  const enc = (encoding ?? '').trim().toLowerCase();
  if (enc === '' || enc === 'identity') return body;
  const run = (fn: typeof gunzipSync, name: string): Buffer => {
    try {
      return fn(body, { maxOutputLength: cap });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new LogsvcError('E_BODY_TOO_LARGE', `${name} request body decompresses to more than the limit of ${cap} bytes`);
      throw new LogsvcError('E_BAD_REQUEST', `request body is not valid ${name} data (${(err as Error).message})`);
    }
  };
  if (enc === 'gzip' || enc === 'x-gzip') return run(gunzipSync, 'gzip');
  if (enc === 'deflate') return run(inflateSync, 'deflate');
  throw new LogsvcError('E_UNSUPPORTED_MEDIA_TYPE', `Content-Encoding "${enc.slice(0, 50)}" is not supported; use gzip, deflate or none`);
}

type PreparedRecord = { payload: Buffer; summary: RecordSummary; events: number };

function bounded(encoded: { payload: Buffer; summary: RecordSummary }, events: number): PreparedRecord {
  if (encoded.payload.length > MAX_RECORD_BYTES) {
    throw new LogsvcError('E_BODY_TOO_LARGE', `the request's events encode to ${encoded.payload.length} bytes, more than one request may hold (${MAX_RECORD_BYTES}); split it`);
  }
  return { ...encoded, events };
}

/** Merges groups with the same tag set and encodes the record. */
export function prepareRecord(repositoryId: string, groups: EventGroup[], at: number): PreparedRecord {
  const merged = new Map<string, RecordGroup>();
  let events = 0;
  for (const g of groups) {
    events += g.events.length;
    const ds = datasourceId(repositoryId, g.tags);
    const have = merged.get(ds);
    if (have === undefined) merged.set(ds, { ds, tags: g.tags, events: g.events });
    else for (const e of g.events) have.events.push(e);
  }
  return bounded(encodeRecord({ repo: repositoryId, at, groups: [...merged.values()] }), events);
}

/** A structured body with no parser on the token, parsed natively when the native parser takes it. */
export function prepareStructuredNatively(body: Buffer, repositoryId: string, at: number, limits: IngestLimits): PreparedRecord | null {
  const groups = parseStructuredNatively(body, repositoryId, limits);
  if (groups === null) return null;
  let events = 0;
  for (const g of groups) events += g.n;
  return bounded(assembleRecord(repositoryId, at, groups), events);
}

/**
 * A HEC event or Elasticsearch bulk body, parsed natively when the native parser takes it
 * (native-structured.ts parseDoorNatively); `idPrefix` names generated bulk document ids.
 */
export function prepareDoorNatively(
  p: DoorParams,
  body: Buffer,
  repositoryId: string,
  at: number,
  limits: IngestLimits,
  tokenParser: string | null,
  idPrefix = newIdPrefix(),
): (PreparedRecord & { reply?: DoorReply }) | null {
  if (p.door !== 'hec' && p.door !== 'elastic-bulk') return null;
  const out = parseDoorNatively(p, body, repositoryId, at, limits, tokenParser, idPrefix);
  if (out === null) return null;
  const prepared = bounded(assembleRecord(repositoryId, at, [out.group]), out.group.n);
  return out.itemsJson === undefined ? prepared : { ...prepared, reply: { itemsJson: out.itemsJson, errors: false } };
}

/** Whether the task runs custom parsers (and so must run on a worker thread, never the HTTP thread). */
export function hasCustomParsers(t: IngestTask): boolean {
  const c = t.customParsers;
  return c !== undefined && (isParserSet(c) ? c.names.length > 0 : c.length > 0);
}

/** `native` false keeps the task in JavaScript (bench/ingest/stages.mjs compares the two). */
export function runIngestTask(t: IngestTask, native = true): IngestTaskResult {
  try {
    const body = decompress(Buffer.from(t.body.buffer, t.body.byteOffset, t.body.byteLength), t.contentEncoding, t.maxDecompressedBytes);
    let groups: EventGroup[];
    const custom = hasCustomParsers(t) ? new CustomParsers(t.customParsers!, t.parserLimits ?? DEFAULT_PARSER_LIMITS, t.limits) : undefined;
    if (native && t.kind === 'structured' && t.parser === null && custom === undefined) {
      const fast = prepareStructuredNatively(body, t.repositoryId, t.at, t.limits);
      if (fast !== null) return { ok: true, ...fast };
    }
    if (native && t.kind === 'door' && custom === undefined) {
      const fast = prepareDoorNatively(t.door!, body, t.repositoryId, t.at, t.limits, t.parser);
      if (fast !== null) return { ok: true, ...fast };
    }
    let reply: DoorReply | undefined;
    if (t.kind === 'door') {
      const out = runDoor(t.door!, body, t.parser, t.limits, t.at, custom);
      groups = out.groups;
      reply = out.reply;
    } else if (t.kind === 'raw') {
      groups = normalizeRaw(body.toString('utf8'), t.at, t.limits, t.parser, custom);
    } else {
      const parsed = parseJsonBounded(body.toString('utf8'), t.limits.maxJsonDepth, `${t.kind} ingest body`);
      if (t.kind === 'structured') {
        const tokenCustom = custom?.get(t.parser);
        groups = normalizeStructured(parsed, t.at, t.limits, t.parser === null ? null : builtInParser(t.parser), tokenCustom === undefined ? undefined : { parser: tokenCustom, custom: custom! });
      } else {
        groups = normalizeUnstructured(parsed, t.at, t.limits, t.parser, custom);
      }
    }
    if (custom !== undefined && t.datasourceRoom !== undefined) groups = fitDatasources(groups, t.repositoryId, t.datasourceRoom);
    const prepared = prepareRecord(t.repositoryId, groups, t.at);
    return reply === undefined ? { ok: true, ...prepared } : { ok: true, ...prepared, reply };
  } catch (err) {
    if (err instanceof LogsvcError) {
      const detail = (err as { detail?: unknown }).detail;
      return detail === undefined ? { ok: false, code: err.code, message: err.message } : { ok: false, code: err.code, message: err.message, detail };
    }
    return { ok: false, code: 'E_INTERNAL', message: `ingest processing failed: ${(err as Error).message}` };
  }
}

/** Turns a task result back into a value or the LogsvcError it carried. */
export function unwrapIngestResult(r: IngestTaskResult): { payload: Buffer; summary: RecordSummary; events: number } {
  if (!r.ok) throw new LogsvcError(r.code, r.message);
  return { payload: Buffer.from(r.payload.buffer, r.payload.byteOffset, r.payload.byteLength), summary: r.summary, events: r.events };
}
