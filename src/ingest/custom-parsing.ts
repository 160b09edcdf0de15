/**
 * Custom parsers on the ingest path: the repository's parsers an ingest task carries (plain data),
 * compiled once per thread, the grouping of their output, whose tags may differ per event
 * (fieldsToTag) and so per datasource, and the request's bound on that output: a parser may turn
 * one input into up to MAX_OUTPUT_EVENTS events, so the events and bytes it makes are counted as
 * they are made, against the same limits a request's own events have, and the request stops at the
 * first event past them (a 4xx naming the limit) instead of building everything first.
 */
import { LogsvcError } from '../lib/errors.js';
import type { IngestEvent } from '../events/index.js';
import type { ParsedGroup } from './datasource-room.js';
import { MAX_RECORD_BYTES } from '../queue/queue-file.js';
import type { IngestLimits } from './limits.js';
import { compiledParser, compiledParserByKey, ParserBudget, type MessageParser, type CustomParserDef, type ParsedEvent, type ParserTimeLimits } from '../parsers/custom-parser.js';
import { isParserSet, parserDefAt, type ParserSet } from '../parsers/parser-set.js';

/** Events and bytes (UTF-16 units of text, an estimate of the encoded size) parsers made in one request. */
export class ParserOutput {
  events = 0;
  bytes = 0;
  constructor(
    private readonly maxEvents: number,
    private readonly maxBytes: number,
  ) {}

  count(out: readonly ParsedEvent[]): void {
    this.events += out.length;
    if (this.events > this.maxEvents) {
      throw new LogsvcError('E_VALIDATION', `the request's custom parser made more than ${this.maxEvents} events (ingest.max_events_per_request); split it`);
    }
    for (const p of out) {
      this.bytes += eventChars(p.event);
      for (const k in p.tags) this.bytes += k.length + p.tags[k]!.length;
    }
    if (this.bytes > this.maxBytes) {
      throw new LogsvcError('E_BODY_TOO_LARGE', `the request's custom parser made more than ${this.maxBytes} bytes of events, more than one request may hold; split it`);
    }
  }
}

function eventChars(e: IngestEvent): number {
  let n = e.rawstring.length + e.timezone.length + 8;
  for (const k in e.fields) n += k.length + e.fields[k]!.length;
  return n;
}

export class CustomParsers {
  /** Name -> a way to the compiled parser: a definition, or an index into the shared set. */
  private readonly byName: ReadonlyMap<string, CustomParserDef | number>;
  private readonly set: ParserSet | null;
  readonly budget: ParserBudget;
  readonly output: ParserOutput;
  private readonly compiled = new Map<string, MessageParser>();

  constructor(defs: readonly CustomParserDef[] | ParserSet, limits: ParserTimeLimits, ingestLimits: IngestLimits, maxBytes = MAX_RECORD_BYTES) {
    if (isParserSet(defs)) {
      this.set = defs;
      this.byName = new Map(defs.names.map((n, i) => [n, i]));
    } else {
      this.set = null;
      this.byName = new Map(defs.map((d) => [d.name, d]));
    }
    this.budget = new ParserBudget(limits);
    this.output = new ParserOutput(ingestLimits.maxEventsPerRequest, maxBytes);
  }

  /** The custom parser of that name, compiled; undefined when `name` is not one (built-ins then apply). */
  get(name: string | null | undefined): MessageParser | undefined {
    if (name === null || name === undefined) return undefined;
    let p = this.compiled.get(name);
    if (p === undefined) {
      const ref = this.byName.get(name);
      if (ref === undefined) return undefined;
      // Looked up once per request: the key hashes the script, and items may be many. A parser of
      // the shared set is only read out of it when this thread has not compiled it yet.
      const set = this.set;
      p = typeof ref === 'number' ? compiledParserByKey(set!.keys[ref]!, () => parserDefAt(set!, ref)) : compiledParser(ref);
      this.compiled.set(name, p);
    }
    return p;
  }
}

/** Collects parsed events into one group per distinct tag set, in first-seen order; counts them against the request's output bound. */
export class TagGroups {
  private readonly groups = new Map<string, ParsedGroup>();

  constructor(private readonly output: ParserOutput) {}

  add(out: readonly ParsedEvent[]): void {
    this.output.count(out);
    for (const p of out) {
      const key = JSON.stringify(Object.entries(p.tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      const g = this.groups.get(key);
      if (g === undefined) this.groups.set(key, { tags: p.tags, events: [p.event], fallbackTags: [p.fallbackTags] });
      else {
        g.events.push(p.event);
        g.fallbackTags.push(p.fallbackTags);
      }
    }
  }

  list(): ParsedGroup[] {
    return [...this.groups.values()];
  }
}
