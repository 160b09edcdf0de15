/**
 * Splunk HTTP Event Collector bodies, mapped as the product documents (docs/ingest-doors.md):
 * concatenated JSON objects; `event` (a string is parsed by the token's parser, else the one the
 * `sourcetype` names, else kv; an object's members become fields, unparsed, and its JSON the raw
 * string), `time` (epoch seconds, fraction kept to the millisecond) -> @timestamp, `timezone` ->
 * @timezone, `host` -> @host, `source` -> @source, `sourcetype` -> #type (default "none"), `index`
 * must name the token's repository, `fields` -> fields, `#name` members of it -> tags. The raw
 * endpoint takes one event per line. A bad event fails the whole request (nothing of it is stored)
 * with HEC's code and the event's number.
 */
import { LogsvcError } from '../../lib/errors.js';
import type { EventGroup } from '../../events/index.js';
import { flattenInto } from '../flatten.js';
import type { IngestLimits } from '../limits.js';
import { normaliseTimezone } from '../timestamps.js';
import type { CustomParsers } from '../custom-parsing.js';
import { addDoorTag, DoorSink, secondsToMillis, type DoorMessage } from './common.js';
import { objectRanges, parseObjects, StreamItemError } from './json-stream.js';

export interface HecParams {
  door: 'hec';
  raw: boolean;
  /** The token's repository: `index` must name it. */
  repositoryName: string;
  /** Raw endpoint query parameters (and the channel header). */
  query?: { sourcetype?: string; host?: string; source?: string; index?: string; channel?: string; time?: string };
}

/** HEC's own error codes (Splunk's numbering) for the failures a body can have. */
export const HEC = {
  noData: { code: 5, text: 'No data' },
  invalidData: { code: 6, text: 'Invalid data format' },
  incorrectIndex: { code: 7, text: 'Incorrect index' },
  eventRequired: { code: 12, text: 'Event field is required' },
  eventBlank: { code: 13, text: 'Event field cannot be blank' },
  indexedFields: { code: 15, text: 'Error in handling indexed fields' },
} as const;

/** A HEC refusal of one event: the whole request fails with HEC's code and the event's number. */
export class HecError extends LogsvcError {
  readonly detail: { text: string; code: number; 'invalid-event-number'?: number };
  constructor(kind: { code: number; text: string }, message: string, event?: number) {
    super('E_VALIDATION', message);
    this.detail = { text: kind.text, code: kind.code, ...(event === undefined ? {} : { 'invalid-event-number': event }) };
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined);

export function normalizeHec(text: string, p: HecParams, tokenParser: string | null, limits: IngestLimits, ingestTs: number, custom?: CustomParsers): EventGroup[] {
  const sink = new DoorSink(limits, ingestTs, custom);
  if (p.raw) {
    hecRaw(text, p, tokenParser, sink);
    return sink.list();
  }
  if (text.trim() === '') throw new HecError(HEC.noData, 'the request has no events');
  let items: unknown[];
  try {
    items = parseObjects(text, objectRanges(text, limits.maxJsonDepth, limits.maxEventsPerRequest));
  } catch (err) {
    if (err instanceof StreamItemError) throw new HecError(HEC.invalidData, err.message, err.index);
    throw err;
  }
  items.forEach((item, n) => sink.add(...hecEvent(item as Record<string, unknown>, n, p, tokenParser, limits)));
  return sink.list();
}

function hecEvent(o: Record<string, unknown>, n: number, p: HecParams, tokenParser: string | null, limits: IngestLimits): [string | null, DoorMessage] {
  const where = `event ${n}`;
  const ev = o.event;
  if (ev === undefined) throw new HecError(HEC.eventRequired, `${where}: "event" is required`, n);
  if (ev === null) throw new HecError(HEC.eventBlank, `${where}: "event" cannot be null`, n);
  if (o.index !== undefined && o.index !== null && o.index !== '' && o.index !== p.repositoryName) {
    throw new HecError(HEC.incorrectIndex, `${where}: index "${String(o.index).slice(0, 100)}" is not the ingest token's repository "${p.repositoryName}"`, n);
  }
  let timestamp: number | null = null;
  if (o.time !== undefined && o.time !== null && o.time !== '') {
    timestamp = secondsToMillis(o.time);
    if (timestamp === null) throw new HecError(HEC.invalidData, `${where}: "time" must be epoch seconds (a number or a string of one)`, n);
  }
  let timezone: string | null = null;
  if (o.timezone !== undefined && o.timezone !== null) {
    timezone = typeof o.timezone === 'string' ? normaliseTimezone(o.timezone) : null;
    if (timezone === null) throw new HecError(HEC.invalidData, `${where}: unknown "timezone" ${JSON.stringify(o.timezone).slice(0, 64)}`, n);
  }
  const sourcetype = str(o.sourcetype);
  const fields: Record<string, string> = {};
  let rawstring: string;
  let parse: boolean;
  if (typeof ev === 'object') {
    rawstring = JSON.stringify(ev);
    const flat = flattenInto(fields, ev, '', limits.maxFieldsPerEvent + 1, limits.maxJsonDepth);
    if (flat.truncated) fields['@error_msg'] = `event had more than ${limits.maxFieldsPerEvent} fields; the rest were dropped`;
    parse = false;
  } else {
    rawstring = String(ev);
    parse = true;
  }
  const host = str(o.host);
  if (host !== undefined) fields['@host'] = host;
  const source = str(o.source);
  if (source !== undefined) fields['@source'] = source;
  const tags: Record<string, string> = {};
  const extra = o.fields;
  if (extra !== undefined && extra !== null) {
    if (typeof extra !== 'object' || Array.isArray(extra)) throw new HecError(HEC.indexedFields, `${where}: "fields" must be an object`, n);
    const ex = extra as Record<string, unknown>;
    for (const k in ex) {
      const v = ex[k];
      if (k.startsWith('#')) {
        const s = str(v);
        if (s === undefined) throw new HecError(HEC.indexedFields, `${where}: the tag "${k.slice(0, 100)}" in "fields" must have a string value`, n);
        try {
          addDoorTag(tags, k.slice(1), s, where);
        } catch (err) {
          throw new HecError(HEC.indexedFields, (err as Error).message, n);
        }
      } else if (Array.isArray(v)) {
        flattenInto(fields, v, k, limits.maxFieldsPerEvent + 1, 2);
      } else if (typeof v === 'object' && v !== null) {
        throw new HecError(HEC.indexedFields, `${where}: the value of "fields.${k.slice(0, 100)}" must be a string, a number or an array of them`, n);
      } else if (v !== null && v !== undefined && k !== '') {
        fields[k] = String(v);
      }
    }
  }
  const type = tokenParser ?? sourcetype ?? 'none';
  return [tokenParser ?? sourcetype ?? 'kv', { rawstring, fields, timestamp, timezone: timezone ?? (timestamp === null ? null : 'Z'), tags, type, parse }];
}

function hecRaw(text: string, p: HecParams, tokenParser: string | null, sink: DoorSink): void {
  const q = p.query ?? {};
  if (q.index !== undefined && q.index !== '' && q.index !== p.repositoryName) {
    throw new HecError(HEC.incorrectIndex, `index "${q.index.slice(0, 100)}" is not the ingest token's repository "${p.repositoryName}"`);
  }
  let timestamp: number | null = null;
  if (q.time !== undefined && q.time !== '') {
    timestamp = secondsToMillis(q.time);
    if (timestamp === null) throw new HecError(HEC.invalidData, 'the "time" parameter must be epoch seconds');
  }
  const base: Record<string, string> = {};
  if (q.host !== undefined) base['@host'] = q.host;
  if (q.source !== undefined) base['@source'] = q.source;
  if (q.channel !== undefined) base.channel = q.channel;
  const parser = tokenParser ?? q.sourcetype ?? 'kv';
  const type = tokenParser ?? q.sourcetype ?? 'none';
  let any = false;
  for (const line of text.split(/\r\n|\n|\r/)) {
    if (line === '') continue;
    any = true;
    sink.add(parser, { rawstring: line, fields: { ...base }, timestamp, timezone: timestamp === null ? null : 'Z', tags: {}, type, parse: true });
  }
  if (!any) throw new HecError(HEC.noData, 'the request has no events (no non-empty line)');
}
