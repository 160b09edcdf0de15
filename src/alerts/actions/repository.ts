/**
 * The repository action (api-facts §5.3): each result row is ingested again, through the action's
 * ingest token, as an event of now. Its @rawstring is the row as JSON with tags `#x` renamed
 * `@tag.x`; the token's parser parses it — a custom parser of the repository, resolved as the
 * ingest pipeline resolves it, or a built-in one — or, without one, the row's fields are taken as
 * they are (the product's json-for-action); every event carries the `@trigger.*` fields. The
 * timestamp is always now: no parser's timestamp (the row's own @timestamp) is used.
 */
import type { EventGroup, IngestEvent } from '../../events/index.js';
import type { IngestLimits } from '../../ingest/index.js';
import { buildEvent } from '../../ingest/event-builder.js';
import { builtInParser } from '../../ingest/parsers/index.js';
import { TagGroups, type CustomParsers } from '../../ingest/custom-parsing.js';
import type { ResultRow } from '../../query/index.js';
import type { Invocation, TriggerContext } from '../trigger.js';

export const JSON_FOR_ACTION = 'json-for-action';

/** Fields of a result row that describe where it was stored, not what it says: not copied. */
const STORAGE_FIELDS = new Set(['@timestamp', '@id', '@rawstring', '@timezone', '@ingesttimestamp']);

export function triggerFields(t: TriggerContext, inv: Invocation): Record<string, string> {
  return {
    '@trigger.id': t.alertId,
    '@trigger.name': t.alertName,
    '@trigger.description': t.description,
    '@trigger.type': t.triggerType ?? 'alert',
    '@trigger.query.start': t.queryStart,
    '@trigger.query.end': t.queryEnd ?? 'now',
    '@trigger.invocation.triggeredAt': new Date(t.triggeredAt).toISOString(),
    '@trigger.invocation.uuid': inv.invocationId,
    '@trigger.invocation.start': String(t.startMs),
    '@trigger.invocation.end': String(t.endMs),
    '@trigger.repository.name': t.repositoryName,
  };
}

/** The row with tags renamed (`#host` -> `@tag.host`). */
function renamed(row: ResultRow): Record<string, string | number> {
  // Null prototype: field names are data ("__proto__" is a field like any other).
  const out = Object.create(null) as Record<string, string | number>;
  for (const k of Object.keys(row)) out[k.startsWith('#') ? `@tag.${k.slice(1)}` : k] = row[k]!;
  return out;
}

/**
 * The events of one trigger for the token's `parser`; `custom` holds the repository's custom
 * parser of that name when it is one (undefined: built-in or none).
 */
export function repositoryActionEvents(t: TriggerContext, inv: Invocation, parser: string | null, now: number, limits: IngestLimits, custom?: CustomParsers): EventGroup[] {
  const extra = triggerFields(t, inv);
  const rawstrings = t.rows.map((row) => renamed(row));
  const customParser = custom?.get(parser);
  if (customParser !== undefined) {
    const out = new TagGroups(custom!.output);
    for (const doc of rawstrings) {
      const parsed = customParser.parse({ rawstring: JSON.stringify(doc), input: {}, tags: {}, after: extra, timestamp: now, timezone: null }, now, limits, custom!.budget);
      for (const p of parsed) p.event.timestamp = now;
      out.add(parsed);
    }
    return out.list();
  }
  if (parser !== null) {
    const builtIn = builtInParser(parser);
    const events = rawstrings.map((doc) => {
      const rawstring = JSON.stringify(doc);
      const r = builtIn.parse(rawstring, limits.maxFieldsPerEvent);
      Object.assign(r.fields, extra);
      return buildEvent({ rawstring, timestamp: now, timezone: null, fields: r.fields, error: r.error, fieldsTruncated: r.fieldsTruncated }, now, limits);
    });
    return [{ tags: { type: builtIn.name }, events }];
  }
  const events: IngestEvent[] = rawstrings.map((doc) => {
    const fields = Object.create(null) as Record<string, string>;
    for (const k of Object.keys(doc)) if (!STORAGE_FIELDS.has(k)) fields[k] = String(doc[k]);
    Object.assign(fields, extra);
    return buildEvent({ rawstring: JSON.stringify(doc), timestamp: now, timezone: null, fields, error: null }, now, limits);
  });
  return [{ tags: { type: JSON_FOR_ACTION }, events }];
}
