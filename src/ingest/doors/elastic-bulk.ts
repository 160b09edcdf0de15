/**
 * Elasticsearch `_bulk` bodies (NDJSON action/document pairs), mapped as docs/ingest-doors.md says:
 * `index` and `create` store the document (its members flattened into fields; `@timestamp` as the
 * event's time; a string `message` as @rawstring, parsed by the token's parser, else the one the
 * document's `type` names, else kv; without a `message`, the document's JSON is the raw string and
 * only a token's parser runs; `@tags` names fields that become tags; Beats' host and file names
 * become @host and @source). Every item gets its own status as Elasticsearch answers it; a bad item
 * (a document that is not a JSON object, a bad @timestamp, `update` or `delete`) fails alone. A
 * malformed action line fails the whole request, as in Elasticsearch (the pairing is lost).
 */
import { randomBytes } from 'node:crypto';
import { LogsvcError } from '../../lib/errors.js';
import type { EventGroup } from '../../events/index.js';
import { flattenInto } from '../flatten.js';
import type { IngestLimits } from '../limits.js';
import { parseIsoTimestamp } from '../timestamps.js';
import type { CustomParsers } from '../custom-parsing.js';
import { addDoorTag, DoorSink } from './common.js';
import { objectRanges, parseObjects } from './json-stream.js';
import { MAX_TAGS_PER_EVENT } from '../limits.js';

export interface BulkParams {
  door: 'elastic-bulk';
  /** The index named in the path (`/<index>/_bulk`), the default for items naming none. */
  index?: string;
}

export interface BulkItemError {
  type: string;
  reason: string;
}

/** One item of the response: the action and its `_index`, `_id`, status and error. */
export interface BulkItem {
  action: string;
  index: string;
  id: string;
  status: number;
  error?: BulkItemError;
}

/** A request-level refusal, answered in Elasticsearch's error shape. */
export class BulkError extends LogsvcError {
  readonly detail: { type: string; reason: string };
  constructor(type: string, reason: string) {
    super('E_VALIDATION', reason);
    this.detail = { type, reason };
  }
}

const ACTIONS = new Set(['index', 'create', 'update', 'delete']);

/** Actions in the order of the body: the parsed action line, and the document (or why it has none). */
type Entry = { action: unknown; line: number; doc?: { value: unknown; text: string } | { error: string } | null };

/**
 * The fast way through a clean body: one scan for the objects' bounds (json-stream.ts), each on a
 * line of its own, and one JSON.parse of all of them. Null when anything is unusual (a line that
 * is not an object, bad JSON, an object over two lines): the exact line-by-line way then decides.
 */
function entriesFast(text: string, limits: IngestLimits): Entry[] | null {
  let bounds: number[];
  let values: unknown[];
  try {
    bounds = objectRanges(text, limits.maxJsonDepth, 2 * limits.maxEventsPerRequest + 2);
    for (let j = 0; j < bounds.length; j += 2) {
      const nl = text.indexOf('\n', bounds[j]);
      if (nl >= 0 && nl < bounds[j + 1]!) return null;
    }
    values = parseObjects(text, bounds);
  } catch {
    return null;
  }
  const out: Entry[] = [];
  for (let k = 0; k < values.length; ) {
    const action = values[k];
    const entry: Entry = { action, line: k + 1 };
    out.push(entry);
    k++;
    const name = actionName(action);
    if (name === null) return out;
    if (name === 'delete') continue;
    if (k >= values.length) {
      entry.doc = null;
      return out;
    }
    entry.doc = { value: values[k], text: text.slice(bounds[2 * k], bounds[2 * k + 1]) };
    k++;
  }
  return out;
}

/** The exact way: line by line, each line parsed alone, so a bad document fails only its item. */
function entriesByLine(text: string): Entry[] {
  const lines = text.split('\n');
  const out: Entry[] = [];
  let i = 0;
  const next = (): string | null => {
    while (i < lines.length) {
      const l = lines[i++]!;
      if (l.trim() !== '') return l;
    }
    return null;
  };
  for (;;) {
    const actionLine = next();
    if (actionLine === null) return out;
    let action: unknown;
    try {
      action = JSON.parse(actionLine);
    } catch (err) {
      throw new BulkError('illegal_argument_exception', `Malformed action/metadata line [${i}]: not valid JSON (${(err as Error).message.slice(0, 200)})`);
    }
    const entry: Entry = { action, line: i };
    out.push(entry);
    const name = actionName(action);
    if (name === null) return out;
    if (name === 'delete') continue;
    const docLine = next();
    if (docLine === null) {
      entry.doc = null;
      return out;
    }
    try {
      entry.doc = { value: JSON.parse(docLine), text: docLine.trim() };
    } catch (err) {
      entry.doc = { error: `failed to parse: not valid JSON (${(err as Error).message.slice(0, 200)})` };
    }
  }
}

function actionName(action: unknown): string | null {
  if (typeof action !== 'object' || action === null || Array.isArray(action)) return null;
  let name: string | null = null;
  for (const k in action) {
    if (name !== null || !ACTIONS.has(k)) return null;
    name = k;
  }
  return name;
}

export function normalizeBulk(
  text: string,
  p: BulkParams,
  tokenParser: string | null,
  limits: IngestLimits,
  ingestTs: number,
  custom?: CustomParsers,
  idPrefix = newIdPrefix(),
): { groups: EventGroup[]; items: BulkItem[] } {
  const sink = new DoorSink(limits, ingestTs, custom);
  const items: BulkItem[] = [];
  const ids = new IdSource(idPrefix);
  const entries = entriesFast(text, limits) ?? entriesByLine(text);
  for (const { action, line, doc } of entries) {
    if (items.length >= limits.maxEventsPerRequest) throw new BulkError('illegal_argument_exception', `request carries more than ${limits.maxEventsPerRequest} items (ingest.max_events_per_request); split it`);
    const name = actionName(action);
    if (name === null) throw new BulkError('illegal_argument_exception', `Malformed action/metadata line [${line}], expected one of index, create, update or delete`);
    const meta = (action as Record<string, unknown>)[name];
    const m = typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>) : {};
    const item: BulkItem = { action: name, index: typeof m._index === 'string' ? m._index : (p.index ?? 'logsvc'), id: typeof m._id === 'string' ? m._id : ids.next(), status: 201 };
    items.push(item);
    if (name === 'delete') {
      item.status = 400;
      item.error = { type: 'action_request_validation_exception', reason: 'delete is not supported: events are immutable; use index or create' };
      continue;
    }
    if (doc === null || doc === undefined) throw new BulkError('illegal_argument_exception', `The bulk request must be terminated by a newline [\\n]; action line [${line}] has no document`);
    if (name === 'update') {
      item.status = 400;
      item.error = { type: 'action_request_validation_exception', reason: 'update is not supported: events are immutable; use index or create' };
      continue;
    }
    const failed = 'error' in doc ? { type: 'document_parsing_exception', reason: doc.error } : addDocument(doc.value, doc.text, tokenParser, limits, sink);
    if (failed !== null) {
      item.status = 400;
      item.error = failed;
    }
  }
  if (items.length === 0) throw new BulkError('action_request_validation_exception', 'Validation Failed: 1: no requests added;');
  return { groups: sink.list(), items };
}

/** The random part of a request's generated document ids (12 characters). */
export function newIdPrefix(): string {
  return randomBytes(9).toString('base64url');
}

/**
 * Document ids for items that name none: 20 characters, a random prefix per request and a counter
 * in base 36 (native/structured_ingest.cc makes the same).
 */
class IdSource {
  constructor(private readonly prefix: string) {}
  private n = 0;
  next(): string {
    return this.prefix + (this.n++).toString(36).padStart(8, '0');
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** `doc[a][b]...` or a member literally named "a.b..." (Beats send both shapes). */
function member(doc: Record<string, unknown>, ...path: string[]): unknown {
  const flat = doc[path.join('.')];
  if (flat !== undefined) return flat;
  let v: unknown = doc;
  for (const part of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** Adds one document's event; returns the item's error instead when the document cannot be stored. */
function addDocument(doc: unknown, line: string, tokenParser: string | null, limits: IngestLimits, sink: DoorSink): BulkItemError | null {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return { type: 'document_parsing_exception', reason: 'failed to parse: the document must be a JSON object' };
  const d = doc as Record<string, unknown>;
  let timestamp: number | null = null;
  let timezone: string | null = null;
  const ts = d['@timestamp'];
  if (typeof ts === 'string') {
    const t = parseIsoTimestamp(ts);
    if (t === null) return { type: 'document_parsing_exception', reason: `failed to parse field [@timestamp]: "${ts.slice(0, 64)}" is not an ISO 8601 date-time` };
    timestamp = t.ms;
    timezone = t.zone;
  } else if (typeof ts === 'number' && Number.isFinite(ts) && Math.abs(ts) <= 8.64e15) {
    timestamp = Math.trunc(ts);
    timezone = 'Z';
  } else if (ts !== undefined && ts !== null) {
    return { type: 'document_parsing_exception', reason: 'failed to parse field [@timestamp]: must be an ISO 8601 string or epoch milliseconds' };
  }
  // Members flattened one by one, leaving out @timestamp and a string message (the raw string):
  // deleting them afterwards would turn every event's field object into a slow dictionary.
  const message = str(d.message);
  const fields: Record<string, string> = {};
  let made = 0;
  try {
    for (const k in d) {
      if (k === '@timestamp' || (k === 'message' && message !== undefined) || k === '') continue;
      const flat = flattenInto(fields, d[k], k, limits.maxFieldsPerEvent + 1 - made, limits.maxJsonDepth - 1);
      made += flat.count;
      if (flat.truncated) {
        fields['@error_msg'] = `document had more than ${limits.maxFieldsPerEvent} fields; the rest were dropped`;
        break;
      }
    }
  } catch (err) {
    return { type: 'document_parsing_exception', reason: (err as Error).message };
  }
  const host = str(member(d, 'host', 'name')) ?? str(member(d, 'beat', 'hostname')) ?? str(d.host);
  if (host !== undefined && fields['@host'] === undefined) fields['@host'] = host;
  const source = str(member(d, 'log', 'file', 'path')) ?? str(d.source);
  if (source !== undefined && fields['@source'] === undefined) fields['@source'] = source;
  const tags: Record<string, string> = {};
  const tagNames = d['@tags'];
  if (Array.isArray(tagNames)) {
    if (tagNames.length > MAX_TAGS_PER_EVENT) return { type: 'document_parsing_exception', reason: `@tags names more than ${MAX_TAGS_PER_EVENT} fields` };
    for (const t of tagNames) {
      if (typeof t !== 'string') continue;
      const v = fields[t];
      if (v === undefined) continue;
      try {
        addDoorTag(tags, t, v, '@tags');
      } catch (err) {
        return { type: 'document_parsing_exception', reason: (err as Error).message };
      }
    }
  }
  const parser = tokenParser ?? str(d.type) ?? (message === undefined ? null : 'kv');
  sink.add(parser, {
    rawstring: message ?? line,
    fields,
    timestamp,
    timezone,
    tags,
    type: parser ?? 'none',
    parse: parser !== null,
  });
  return null;
}

/** What the `_bulk` answer needs from the parsing thread: its `items` array as JSON, and whether any failed. */
export interface BulkReply {
  itemsJson: string;
  errors: boolean;
}

/** The items of the `_bulk` answer, each as Elasticsearch writes it (`_seq_no` is the item's place). */
export function bulkReply(items: readonly BulkItem[]): BulkReply {
  let json = '[';
  let errors = false;
  items.forEach((it, seq) => {
    const body =
      it.error === undefined
        ? { _index: it.index, _id: it.id, _version: 1, result: 'created', _shards: { total: 1, successful: 1, failed: 0 }, _seq_no: seq, _primary_term: 1, status: it.status }
        : { _index: it.index, _id: it.id, status: it.status, error: it.error };
    if (it.error !== undefined) errors = true;
    json += `${seq === 0 ? '' : ','}${JSON.stringify({ [it.action]: body })}`;
  });
  return { itemsJson: `${json}]`, errors };
}
