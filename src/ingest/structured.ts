/**
 * Structured ingest bodies: `[{tags: {...}, events: [{timestamp, timezone?, attributes?, rawstring?}]}]`.
 * Tags define the datasource (at least one per item); attributes are flattened into fields; the raw
 * string defaults to the JSON of the attributes. A parser attached to the ingest token, if any, also
 * runs on the raw string (attributes win over what it finds) and names #type.
 */
import { LogsvcError } from '../lib/errors.js';
import { MAX_SECTION_STRINGS, sectionTooLarge, type EventGroup, type IngestEvent } from '../events/index.js';
import { buildEvent } from './event-builder.js';
import { flattenInto } from './flatten.js';
import type { IngestLimits } from './limits.js';
import type { BuiltInParser } from './parsers/index.js';
import { readTags } from './tags.js';
import { normaliseTimezone, parseIsoTimestamp } from './timestamps.js';
import { TagGroups, type CustomParsers } from './custom-parsing.js';
import type { MessageParser } from '../parsers/custom-parser.js';

function timestampOf(ev: Record<string, unknown>, where: string): { ms: number; zone: string } {
  const ts = ev.timestamp;
  if (typeof ts === 'number') {
    // The range of JavaScript dates: anything beyond is not a time.
    if (!Number.isFinite(ts) || Math.abs(ts) > 8.64e15) throw new LogsvcError('E_VALIDATION', `${where}.timestamp: must be epoch milliseconds within ±8.64e15`);
    let zone = 'Z';
    if (ev.timezone !== undefined && ev.timezone !== null) {
      if (typeof ev.timezone !== 'string') throw new LogsvcError('E_VALIDATION', `${where}.timezone: must be a string`);
      const z = normaliseTimezone(ev.timezone);
      if (z === null) throw new LogsvcError('E_VALIDATION', `${where}.timezone: unknown time zone "${ev.timezone.slice(0, 64)}"`);
      zone = z;
    }
    return { ms: Math.trunc(ts), zone };
  }
  if (typeof ts === 'string') {
    const parsed = parseIsoTimestamp(ts, { requireZone: true });
    if (parsed === null) throw new LogsvcError('E_VALIDATION', `${where}.timestamp: "${ts.slice(0, 64)}" is not an ISO 8601 date-time with a zone`);
    return parsed;
  }
  if (ts === undefined || ts === null) throw new LogsvcError('E_VALIDATION', `${where}.timestamp: required (epoch milliseconds or ISO 8601)`);
  throw new LogsvcError('E_VALIDATION', `${where}.timestamp: must be a number or a string`);
}

/**
 * The bound of a record section (events x distinct field names, record.ts MAX_SECTION_STRINGS),
 * checked while an item's events are made rather than once they all exist: events that each bring
 * new names would otherwise take GBs before the record refuses them. Names are counted exactly
 * only once a cheap upper bound (fields made so far) could pass the bound.
 */
class SectionBound {
  private upper = 0;
  private names: Set<string> | null = null;

  constructor(private readonly events: number) {}

  /** After each event; `made` is at least the number of fields the event has. */
  add(done: readonly IngestEvent[], made: number): void {
    if (this.names === null) {
      this.upper += made;
      if (this.events * (2 + this.upper) <= MAX_SECTION_STRINGS) return;
      this.names = new Set();
      for (const e of done) for (const k in e.fields) this.names.add(k);
    } else {
      for (const k in done[done.length - 1]!.fields) this.names.add(k);
    }
    if (this.events * (2 + this.names.size) > MAX_SECTION_STRINGS) throw sectionTooLarge(this.events, this.names.size);
  }
}

export function normalizeStructured(body: unknown, ingestTs: number, limits: IngestLimits, parser: BuiltInParser | null, customParser?: { parser: MessageParser; custom: CustomParsers }): EventGroup[] {
  if (!Array.isArray(body)) throw new LogsvcError('E_VALIDATION', 'structured ingest body must be a JSON array of {"tags", "events"} items');
  // Items without events count towards no other bound.
  if (body.length > limits.maxEventsPerRequest) throw new LogsvcError('E_VALIDATION', `request carries more than ${limits.maxEventsPerRequest} items; split it`);
  const groups: EventGroup[] = [];
  let total = 0;
  body.forEach((item: unknown, i) => {
    const where = `[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new LogsvcError('E_VALIDATION', `${where}: must be an object with "tags" and "events"`);
    const it = item as Record<string, unknown>;
    const tags = readTags(it.tags, `${where}.tags`);
    if (Object.keys(tags).length === 0) throw new LogsvcError('E_VALIDATION', `${where}.tags: structured ingest needs at least one tag`);
    if (parser !== null && tags.type === undefined) tags.type = parser.name;
    if (!Array.isArray(it.events)) throw new LogsvcError('E_VALIDATION', `${where}.events: must be an array of events`);
    total += it.events.length;
    if (total > limits.maxEventsPerRequest) throw new LogsvcError('E_VALIDATION', `request carries more than ${limits.maxEventsPerRequest} events; split it`);
    const events: IngestEvent[] = [];
    const bound = new SectionBound(it.events.length);
    const customOut = customParser === undefined ? null : new TagGroups(customParser.custom.output);
    it.events.forEach((raw: unknown, j) => {
      const w = `${where}.events[${j}]`;
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new LogsvcError('E_VALIDATION', `${w}: must be an object`);
      const ev = raw as Record<string, unknown>;
      const { ms, zone } = timestampOf(ev, w);
      const fields: Record<string, string> = {};
      const attrs = ev.attributes;
      if (attrs !== undefined && attrs !== null && (typeof attrs !== 'object' || Array.isArray(attrs))) throw new LogsvcError('E_VALIDATION', `${w}.attributes: must be an object`);
      if (ev.rawstring !== undefined && ev.rawstring !== null && typeof ev.rawstring !== 'string') throw new LogsvcError('E_VALIDATION', `${w}.rawstring: must be a string`);
      let rawstring = typeof ev.rawstring === 'string' ? ev.rawstring : JSON.stringify(attrs ?? {});
      if (customOut !== null) {
        // The token's custom parser sees the attributes as fields and the sender's time as the default.
        const input: Record<string, string> = {};
        if (attrs !== undefined && attrs !== null) flattenInto(input, attrs, '', limits.maxFieldsPerEvent + 1, limits.maxJsonDepth);
        customOut.add(customParser!.parser.parse({ rawstring, input, tags, after: {}, timestamp: ms, timezone: zone }, ingestTs, limits, customParser!.custom.budget));
        return;
      }
      let error: string | null = null;
      // @error, @error_msg and @event_parsed may be added.
      let made = 3;
      if (parser !== null) {
        const r = parser.parse(rawstring, limits.maxFieldsPerEvent);
        Object.assign(fields, r.fields);
        made += Object.keys(r.fields).length;
        error = r.error;
        if (r.fieldsTruncated === true) error ??= `event had more than ${limits.maxFieldsPerEvent} fields; only the first ${limits.maxFieldsPerEvent} were kept`;
      }
      let truncated = false;
      if (attrs !== undefined && attrs !== null) {
        const flat = flattenInto(fields, attrs, '', limits.maxFieldsPerEvent + 1, limits.maxJsonDepth);
        truncated = flat.truncated;
        made += flat.count;
      }
      if (truncated) error ??= `event had more than ${limits.maxFieldsPerEvent} attributes; the rest were dropped`;
      rawstring = rawstring ?? '';
      events.push(buildEvent({ rawstring, timestamp: ms, timezone: zone, fields, error }, ingestTs, limits));
      bound.add(events, made);
    });
    if (customOut !== null) groups.push(...customOut.list());
    else if (events.length > 0) groups.push({ tags, events });
  });
  return groups;
}
