/**
 * The repository action (api-facts §5.3): each result row is ingested again, through the action's
 * ingest token, as an event of now. Its @rawstring is the row as JSON with tags `#x` renamed
 * `@tag.x`; the token's parser parses it, or, without one, the row's fields are taken as they are
 * (the product's json-for-action); every event carries the `@trigger.*` fields.
 */
import type { EventGroup, IngestEvent } from '../../events/index.js';
import type { IngestLimits } from '../../ingest/index.js';
import { buildEvent } from '../../ingest/event-builder.js';
import { builtInParser } from '../../ingest/parsers/index.js';
import { parseMessage } from '../../ingest/unstructured.js';
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
    '@trigger.type': 'alert',
    '@trigger.query.start': t.queryStart,
    '@trigger.query.end': 'now',
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

export function repositoryActionEvents(t: TriggerContext, inv: Invocation, parser: string | null, now: number, limits: IngestLimits): EventGroup {
  const extra = triggerFields(t, inv);
  const events: IngestEvent[] = t.rows.map((row) => {
    const doc = renamed(row);
    const rawstring = JSON.stringify(doc);
    if (parser !== null) return parseMessage(builtInParser(parser), rawstring, extra, now, limits);
    const fields = Object.create(null) as Record<string, string>;
    for (const k of Object.keys(doc)) if (!STORAGE_FIELDS.has(k)) fields[k] = String(doc[k]);
    Object.assign(fields, extra);
    return buildEvent({ rawstring, timestamp: now, timezone: null, fields, error: null }, now, limits);
  });
  return { tags: { type: parser ?? JSON_FOR_ACTION }, events };
}
