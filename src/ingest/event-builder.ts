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
  /** The parser already dropped fields at the per-event limit. */
  fieldsTruncated?: boolean | undefined;
}

/** UTF-8 length, computed only when the UTF-16 length says it could matter (at most 3 bytes per unit). */
function utf8Exceeds(text: string, limit: number): boolean {
  return text.length * 3 > limit && Buffer.byteLength(text, 'utf8') > limit;
}

/** The longest prefix of `text` of at most `maxBytes` UTF-8 bytes, not splitting a surrogate pair. */
function utf8Prefix(text: string, maxBytes: number): string {
  let lo = 0;
  let hi = Math.min(text.length, maxBytes);
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (Buffer.byteLength(text.slice(0, mid), 'utf8') <= maxBytes) lo = mid;
    else hi = mid - 1;
  }
  const last = text.charCodeAt(lo - 1);
  if (lo > 0 && last >= 0xd800 && last <= 0xdbff) lo--;
  return text.slice(0, lo);
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
  } else if (p.fieldsTruncated === true) {
    error ??= `event had more than ${limits.maxFieldsPerEvent} fields; only the first ${limits.maxFieldsPerEvent} were kept`;
  }
  if (error !== null) {
    fields['@error'] = 'true';
    fields['@error_msg'] = error;
    if (p.error !== null) fields['@event_parsed'] = 'false';
  }
  let rawstring = p.rawstring;
  // Sizes in UTF-8 bytes; the exact count is only taken when the character count says it could matter.
  let chars = rawstring.length;
  for (const k in fields) chars += k.length + fields[k]!.length;
  let oversize = false;
  if (chars * 3 > limits.maxEventBytes) {
    let bytes = Buffer.byteLength(rawstring, 'utf8');
    for (const k in fields) bytes += Buffer.byteLength(k, 'utf8') + Buffer.byteLength(fields[k]!, 'utf8');
    oversize = bytes > limits.maxEventBytes;
  }
  if (oversize) {
    const cut = utf8Exceeds(rawstring, limits.maxEventBytes - 3);
    if (cut) rawstring = `${utf8Prefix(rawstring, Math.max(0, limits.maxEventBytes - 3))}...`;
    fields = { '@error': 'true', '@error_msg': `event larger than ${limits.maxEventBytes} bytes: ${cut ? '@rawstring truncated, ' : ''}fields dropped` };
  }
  return {
    timestamp: p.timestamp ?? ingestTs,
    timezone: p.timezone ?? 'Z',
    rawstring,
    fields,
  };
}
