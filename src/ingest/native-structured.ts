/**
 * Structured ingest bodies parsed natively (native/structured_ingest.cc): the one importer of that
 * module. It parses a body straight into the queue record's sections, without a JavaScript value
 * per event, for the common case: no parser on the token, numeric or ISO 8601 timestamps, a
 * rawstring with every event. For anything else it declines and the request goes the JavaScript way
 * (src/ingest/structured.ts), which also reports every error, so that there is one place for
 * each rule and message. Both make the same record bytes (test/unit/ingest/native-structured.test.ts).
 *
 * Tags are read here, by the same readTags as the JavaScript path, from the byte range of each
 * item's tags value that the module returns.
 */
import { loadNative } from '../lib/native-module.js';
import { datasourceId, type EncodedGroup } from '../events/index.js';
import type { IngestLimits } from './limits.js';
import { readTags } from './tags.js';
import type { HecParams } from './doors/hec.js';
import type { BulkParams } from './doors/elastic-bulk.js';

interface NativeItem {
  /** Byte range of the item's "tags" value in the body; tagsEnd 0 when it has none. */
  tagsStart: number;
  tagsEnd: number;
  n: number;
  b: number;
  /** The events (record.ts version 3); absent when n is 0. */
  section?: Buffer;
}

interface NativeDoorGroup {
  /** The #type tag of every event. */
  type: string;
  n: number;
  b: number;
  section: Buffer;
  /** Bulk: the answer's `items` array as JSON (every item stored, status 201). */
  itemsJson?: string;
}

interface NativeModule {
  parse(body: Uint8Array, maxEvents: number, maxEventBytes: number, maxFields: number, maxDepth: number): NativeItem[] | null;
  parseDoor(
    body: Uint8Array,
    hec: boolean,
    maxEvents: number,
    maxEventBytes: number,
    maxFields: number,
    maxDepth: number,
    at: number,
    tokenParser: string | null,
    repository: string,
    idPrefix: string,
    defaultIndexJson: string,
  ): NativeDoorGroup | null;
}

const loaded = loadNative<NativeModule>('structured_ingest.node');

/** Why structured bodies are parsed in JavaScript only (null when the native parser is loaded). */
export const nativeStructuredUnavailable: string | null = loaded.why;

/**
 * The body's groups of events, encoded, or null when the native parser is missing or declines the
 * body (then the JavaScript path must take it). Items with the same tags decline too: the
 * JavaScript path merges them.
 */
export function parseStructuredNatively(body: Buffer, repositoryId: string, limits: IngestLimits): EncodedGroup[] | null {
  const m = loaded.module;
  if (m === null) return null;
  const items = m.parse(body, limits.maxEventsPerRequest, limits.maxEventBytes, limits.maxFieldsPerEvent, limits.maxJsonDepth);
  if (items === null) return null;
  const groups: EncodedGroup[] = [];
  const seen = new Set<string>();
  for (const it of items) {
    if (it.tagsEnd === 0) return null;
    let tags: Record<string, string>;
    try {
      tags = readTags(JSON.parse(body.toString('utf8', it.tagsStart, it.tagsEnd)), 'tags');
    } catch {
      return null;
    }
    if (Object.keys(tags).length === 0) return null;
    if (it.n === 0) continue;
    const ds = datasourceId(repositoryId, tags);
    if (seen.has(ds)) return null;
    seen.add(ds);
    groups.push({ ds, tags, n: it.n, b: it.b, section: it.section! });
  }
  return groups;
}

/**
 * A HEC event body or an Elasticsearch bulk body parsed natively, for the common cases where the
 * messages go through the built-in kv parser (run natively, as kv.ts does) or through none (the
 * token's parser, else a HEC event's sourcetype or a bulk document's type, names kv, none, or no
 * built-in parser; HEC object events are never parsed) and every event lands in one datasource.
 * Null when the module is missing or declines (then src/ingest/doors/ takes the body and reports
 * every error). Bulk bodies also get the answer's items as JSON; `idPrefix` is the random part of
 * generated document ids (elastic-bulk.ts newIdPrefix).
 */
export function parseDoorNatively(
  p: HecParams | BulkParams,
  body: Buffer,
  repositoryId: string,
  at: number,
  limits: IngestLimits,
  tokenParser: string | null,
  idPrefix: string,
): { group: EncodedGroup; itemsJson?: string } | null {
  const m = loaded.module;
  if (m === null) return null;
  const hec = p.door === 'hec';
  if (hec && p.raw) return null;
  const r = m.parseDoor(
    body,
    hec,
    limits.maxEventsPerRequest,
    limits.maxEventBytes,
    limits.maxFieldsPerEvent,
    limits.maxJsonDepth,
    at,
    tokenParser,
    hec ? p.repositoryName : '',
    idPrefix,
    hec ? '""' : JSON.stringify(p.index ?? 'logsvc'),
  );
  if (r === null) return null;
  const tags = { type: r.type };
  const group: EncodedGroup = { ds: datasourceId(repositoryId, tags), tags, n: r.n, b: r.b, section: r.section };
  return r.itemsJson === undefined ? { group } : { group, itemsJson: r.itemsJson };
}
