/**
 * Turning a raw string and what a parser (or a structured sender) found into a stored event: the
 * timestamp fallback to ingest time, the product's parse-error fields, and the per-event bounds
 * (fields kept, event size: an oversize event keeps a truncated @rawstring ending in "..." and no
 * fields, as the product does).
 */
import type { IngestEvent } from '../events/index.js';
import type { IngestLimits } from './limits.js';

export interface EventParts {
  rawstring: string;
  timestamp: number | null;
  timezone: string | null;
  fields: Record<string, string>;
  /** A parse failure: the event is kept and marked. */
  error: string | null;
}

export function buildEvent(p: EventParts, ingestTs: number, limits: IngestLimits): IngestEvent {
  let fields = p.fields;
  let error = p.error;
  const names = Object.keys(fields);
  if (names.length > limits.maxFieldsPerEvent) {
    const kept: Record<string, string> = {};
    for (let i = 0; i < limits.maxFieldsPerEvent; i++) kept[names[i]!] = fields[names[i]!]!;
    fields = kept;
    error ??= `event had ${names.length} fields; only the first ${limits.maxFieldsPerEvent} were kept`;
  }
  if (error !== null) {
    fields['@error'] = 'true';
    fields['@error_msg'] = error;
    if (p.error !== null) fields['@event_parsed'] = 'false';
  }
  let rawstring = p.rawstring;
  let size = rawstring.length;
  for (const k in fields) size += k.length + fields[k]!.length;
  if (size > limits.maxEventBytes) {
    rawstring = `${rawstring.slice(0, Math.max(0, limits.maxEventBytes - 3))}...`;
    fields = { '@error': 'true', '@error_msg': `event larger than ${limits.maxEventBytes} bytes: @rawstring truncated, fields dropped` };
  }
  return {
    timestamp: p.timestamp ?? ingestTs,
    timezone: p.timezone ?? 'Z',
    rawstring,
    fields,
  };
}
