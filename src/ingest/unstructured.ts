/**
 * Unstructured ingest bodies: `[{messages: [...], type?, fields?, tags?}]`, and raw bodies (one
 * event). Each message is parsed by the ingest token's parser, else the item's `type`, else kv; the
 * parser's name becomes the #type tag; `fields` are added to every event after parsing.
 */
import { LogsvcError } from '../lib/errors.js';
import type { EventGroup, IngestEvent } from '../events/index.js';
import { buildEvent } from './event-builder.js';
import type { IngestLimits } from './limits.js';
import { builtInParser, type BuiltInParser } from './parsers/index.js';
import { readTags } from './tags.js';
import { MAX_RECORD_BYTES } from '../queue/queue-file.js';
import { TagGroups, type CustomParsers } from './custom-parsing.js';

function readFields(value: unknown, where: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new LogsvcError('E_VALIDATION', `${where}: must be an object of field names to string values`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v === 'object' && v !== null) throw new LogsvcError('E_VALIDATION', `${where}.${k.slice(0, 100)}: field values must be strings`);
    if (v !== null && v !== undefined) out[k] = String(v);
  }
  return out;
}

export function parseMessage(parser: BuiltInParser, message: string, extra: Record<string, string>, ingestTs: number, limits: IngestLimits): IngestEvent {
  const r = parser.parse(message, limits.maxFieldsPerEvent);
  const fields = r.fields;
  for (const k in extra) fields[k] = extra[k]!;
  return buildEvent({ rawstring: message, timestamp: r.timestamp, timezone: r.timezone, fields, error: r.error, fieldsTruncated: r.fieldsTruncated }, ingestTs, limits);
}

export function normalizeUnstructured(body: unknown, ingestTs: number, limits: IngestLimits, tokenParser: string | null, custom?: CustomParsers): EventGroup[] {
  if (!Array.isArray(body)) throw new LogsvcError('E_VALIDATION', 'unstructured ingest body must be a JSON array of {"messages", "type", "fields", "tags"} items');
  const groups: EventGroup[] = [];
  let total = 0;
  body.forEach((item: unknown, i) => {
    const where = `[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new LogsvcError('E_VALIDATION', `${where}: must be an object with "messages"`);
    const it = item as Record<string, unknown>;
    if (!Array.isArray(it.messages)) throw new LogsvcError('E_VALIDATION', `${where}.messages: required, an array of strings`);
    if (it.type !== undefined && it.type !== null && typeof it.type !== 'string') throw new LogsvcError('E_VALIDATION', `${where}.type: must be a parser name`);
    const parserName = tokenParser ?? (it.type as string | undefined) ?? null;
    const customParser = custom?.get(parserName);
    const parser = builtInParser(parserName);
    const tags = readTags(it.tags, `${where}.tags`);
    const senderTags = { ...tags };
    tags.type = parser.name;
    const extra = readFields(it.fields, `${where}.fields`);
    // `fields` are copied into every message's event: a small body could otherwise expand into a
    // record the queue cannot hold (and memory could not either). Check before building anything.
    let perEvent = 0;
    for (const k in extra) perEvent += k.length + extra[k]!.length;
    if (perEvent * it.messages.length > MAX_RECORD_BYTES) {
      throw new LogsvcError('E_BODY_TOO_LARGE', `${where}: ${it.messages.length} messages times ${perEvent} characters of fields is more than one request may expand to (${MAX_RECORD_BYTES} bytes); split it`);
    }
    total += it.messages.length;
    if (total > limits.maxEventsPerRequest) throw new LogsvcError('E_VALIDATION', `request carries more than ${limits.maxEventsPerRequest} events; split it`);
    if (customParser !== undefined) {
      const out = new TagGroups(custom!.output);
      it.messages.forEach((m: unknown, j) => {
        if (typeof m !== 'string') throw new LogsvcError('E_VALIDATION', `${where}.messages[${j}]: must be a string`);
        out.add(customParser.parse({ rawstring: m, input: {}, tags: senderTags, after: extra, timestamp: null, timezone: null }, ingestTs, limits, custom!.budget));
      });
      groups.push(...out.list());
      return;
    }
    const events: IngestEvent[] = [];
    it.messages.forEach((m: unknown, j) => {
      if (typeof m !== 'string') throw new LogsvcError('E_VALIDATION', `${where}.messages[${j}]: must be a string`);
      events.push(parseMessage(parser, m, extra, ingestTs, limits));
    });
    if (events.length > 0) groups.push({ tags, events });
  });
  return groups;
}

export function normalizeRaw(text: string, ingestTs: number, limits: IngestLimits, tokenParser: string | null, custom?: CustomParsers): EventGroup[] {
  const customParser = custom?.get(tokenParser);
  if (customParser !== undefined) {
    const out = new TagGroups(custom!.output);
    out.add(customParser.parse({ rawstring: text, input: {}, tags: {}, after: {}, timestamp: null, timezone: null }, ingestTs, limits, custom!.budget));
    return out.list();
  }
  const parser = builtInParser(tokenParser);
  return [{ tags: { type: parser.name }, events: [parseMessage(parser, text, {}, ingestTs, limits)] }];
}
