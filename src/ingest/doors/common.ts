/**
 * What every shipper's door (HEC, Elasticsearch bulk, OTLP, syslog listeners) shares once it has
 * taken its protocol apart: a message (a raw string, the fields the protocol itself carried, maybe
 * a time and sender tags) goes through the same parsers as the product's own endpoints: a custom
 * parser of the repository when the chosen name is one, else the built-in of that name (kv for
 * unknown names). Fields the protocol carried win over what a built-in parser finds (as structured
 * ingest's attributes do); a protocol time wins over the parser's. Events are counted against
 * `ingest.max_events_per_request` as they are made, and grouped by tag set.
 */
import { LogsvcError } from '../../lib/errors.js';
import type { EventGroup, IngestEvent } from '../../events/index.js';
import { buildEvent } from '../event-builder.js';
import type { IngestLimits } from '../limits.js';
import { builtInParser } from '../parsers/index.js';
import { TagGroups, type CustomParsers } from '../custom-parsing.js';
import { MAX_TAG_VALUE_CHARS, MAX_TAGS_PER_EVENT } from '../limits.js';

export interface DoorMessage {
  rawstring: string;
  /** Fields the protocol carried (HEC metadata and object members, a bulk document, an OTLP record). */
  fields: Record<string, string>;
  /** Epoch ms from the protocol, or null (then the parser's, else the ingest time). */
  timestamp: number | null;
  timezone: string | null;
  /** Tags besides #type (HEC `fields` named `#x`). */
  tags: Record<string, string>;
  /** The #type tag when no parser names it (a HEC sourcetype, "none"). */
  type: string;
  /** Whether the raw string goes through the parser (a HEC object event does not). */
  parse: boolean;
}

/** A tag name a sender may set; "repo" is the node's. */
const TAG_NAME = /^[A-Za-z0-9_@.\-]{1,100}$/;

/** Sender tags from a door (`#name` members): validated the way structured ingest's tags are. */
export function addDoorTag(tags: Record<string, string>, name: string, value: string, where: string): void {
  if (!TAG_NAME.test(name) || name === 'repo' || name === 'type' || name === '__proto__') {
    throw new LogsvcError('E_VALIDATION', `${where}: "#${name.slice(0, 100)}" cannot be a tag (1-100 letters, digits, "_", "-", ".", "@"; not #repo or #type)`);
  }
  if (value.length > MAX_TAG_VALUE_CHARS) throw new LogsvcError('E_VALIDATION', `${where}: the value of tag "#${name}" is longer than ${MAX_TAG_VALUE_CHARS} characters`);
  tags[name] = value;
  if (Object.keys(tags).length > MAX_TAGS_PER_EVENT) throw new LogsvcError('E_VALIDATION', `${where}: more than ${MAX_TAGS_PER_EVENT} tags`);
}

/** Turns door messages into event groups with the repository's parsers; bounded by the request limits. */
export class DoorSink {
  private readonly groups = new Map<string, EventGroup>();
  private readonly custom: TagGroups | null;
  private events = 0;

  constructor(
    private readonly limits: IngestLimits,
    private readonly ingestTs: number,
    private readonly customParsers: CustomParsers | undefined,
  ) {
    this.custom = customParsers === undefined ? null : new TagGroups(customParsers.output);
  }

  get count(): number {
    return this.events;
  }

  /** Adds one message, parsed by `parser` (a custom parser's name, a built-in's, or null for none). */
  add(parser: string | null, m: DoorMessage): void {
    if (++this.events > this.limits.maxEventsPerRequest) {
      throw new LogsvcError('E_VALIDATION', `request carries more than ${this.limits.maxEventsPerRequest} events (ingest.max_events_per_request); split it`);
    }
    const custom = m.parse ? this.customParsers?.get(parser) : undefined;
    if (custom !== undefined) {
      this.custom!.add(custom.parse({ rawstring: m.rawstring, input: m.fields, tags: m.tags, after: {}, timestamp: m.timestamp, timezone: m.timezone }, this.ingestTs, this.limits, this.customParsers!.budget));
      return;
    }
    let event: IngestEvent;
    const builtIn = m.parse && parser !== null ? builtInParser(parser) : null;
    // The `none` parser finds nothing: no need to run it and copy the fields over.
    if (builtIn !== null && builtIn.name !== 'none') {
      const r = builtIn.parse(m.rawstring, this.limits.maxFieldsPerEvent);
      const fields = r.fields;
      for (const k in m.fields) {
        // A member named "__proto__" is an own field of m.fields; plain assignment would hit the
        // prototype setter and drop it (it did, when a parser ran).
        if (k === '__proto__') Object.defineProperty(fields, k, { value: m.fields[k], enumerable: true, writable: true, configurable: true });
        else fields[k] = m.fields[k]!;
      }
      event = buildEvent(
        { rawstring: m.rawstring, timestamp: m.timestamp ?? r.timestamp, timezone: m.timestamp !== null ? m.timezone : (r.timezone ?? m.timezone), fields, error: r.error, fieldsTruncated: r.fieldsTruncated },
        this.ingestTs,
        this.limits,
      );
    } else {
      event = buildEvent({ rawstring: m.rawstring, timestamp: m.timestamp, timezone: m.timezone, fields: m.fields, error: null }, this.ingestTs, this.limits);
    }
    // Most messages carry no tags of their own: their group is found by #type alone.
    let plain = true;
    for (const _ in m.tags) {
      plain = false;
      break;
    }
    const key = plain ? `\u0002${m.type}` : tagKey({ ...m.tags, type: m.type });
    const g = this.groups.get(key);
    if (g === undefined) this.groups.set(key, { tags: { ...m.tags, type: m.type }, events: [event] });
    else g.events.push(event);
  }

  list(): EventGroup[] {
    const out = [...this.groups.values()];
    if (this.custom !== null) out.push(...this.custom.list());
    return out;
  }
}

function tagKey(tags: Record<string, string>): string {
  const names = Object.keys(tags);
  if (names.length === 1) return `${names[0]}\u0000${tags[names[0]!]}`;
  names.sort();
  let k = '';
  for (const n of names) k += `${n}\u0000${tags[n]}\u0001`;
  return k;
}

/**
 * Epoch seconds (integer, fraction, or a string of either: HEC's `time`) to epoch ms, kept to the
 * millisecond; null for anything else.
 */
export function secondsToMillis(v: unknown): number | null {
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v)) n = Number(v);
  else return null;
  if (!Number.isFinite(n) || Math.abs(n) > 8.64e12) return null;
  return Math.round(n * 1000);
}
