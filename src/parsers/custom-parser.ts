/**
 * A custom parser at work: its script compiled once (per thread) into the query engine's per-event
 * stages, then run on each ingested message. The output events' `@timestamp` (epoch ms text, as
 * parseTimestamp() writes it) and `@timezone` become the event's time; `#name` fields and the
 * parser's `fieldsToTag` become tags; everything else is a field. A failing script never fails the
 * request: the event is kept as it came in, marked with `@error`/`@error_msg` (api-facts §3.7).
 * Time is bounded per request (once a request has used its parser time, its later events are
 * stored unparsed and marked); one event's work is bounded by the engine's own deterministic limits
 * (linear-time regexes, limits on repeats and splits, MAX_OUTPUT_EVENTS). The output of a run that
 * completed is never dropped for the wall time it took: a GC pause or a busy machine must not turn
 * a good event into an error, or move it to another datasource by losing its tags.
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { describeError, isLogsvcError } from '../lib/errors.js';
import type { IngestEvent } from '../events/index.js';
import { compileParserStages } from '../query/compile.js';
import { chainStages } from '../query/pipeline.js';
import { MapEvent, type Emit, type Ev } from '../query/runtime.js';
import { buildEvent } from '../ingest/event-builder.js';
import type { IngestLimits } from '../ingest/limits.js';
import { MAX_TAG_VALUE_CHARS, MAX_TAGS_PER_EVENT } from '../ingest/limits.js';

/** A parser as plain data: what an ingest task carries to a worker thread. */
export interface CustomParserDef {
  id: string;
  name: string;
  script: string;
  fieldsToTag: string[];
  fieldsToBeRemovedBeforeParsing: string[];
  /** When this version was saved. */
  savedAt: number;
}

export interface ParserTimeLimits {
  maxRequestMs: number;
}

/** Events one input may turn into (split(), regex(repeat=true)). */
export const MAX_OUTPUT_EVENTS = 100;
const MAX_EPOCH_MS = 8.64e15;
const TAG_NAME = /^[A-Za-z0-9_@.-]{1,100}$/;
/** Set by the node, never by a parser. */
const RESERVED = new Set(['@id', '@ingesttimestamp', '#repo']);

/** One message for a parser. */
export interface ParserInput {
  rawstring: string;
  /** Fields the event has before parsing (structured attributes). */
  input: Record<string, string>;
  /** The sender's tags (names without "#"). */
  tags: Record<string, string>;
  /** Fields added after parsing (an unstructured item's `fields`). */
  after: Record<string, string>;
  /** The sender's time, used when the parser sets none (else the ingest time). */
  timestamp: number | null;
  timezone: string | null;
}

export interface ParsedEvent {
  /** Tag names without "#" (including type). */
  tags: Record<string, string>;
  /** The tags without the parser's own (the sender's and type): used when those cannot be kept. */
  fallbackTags: Record<string, string>;
  event: IngestEvent;
}

/** Parser time used by one request, shared by every message of it. */
export class ParserBudget {
  usedMs = 0;
  constructor(readonly limits: ParserTimeLimits) {}
  get exhausted(): boolean {
    return this.usedMs > this.limits.maxRequestMs;
  }
}

/** What ingest runs on each message: a compiled parser, or one whose script no longer compiles. */
export interface MessageParser {
  readonly name: string;
  parse(m: ParserInput, ingestTs: number, limits: IngestLimits, budget: ParserBudget): ParsedEvent[];
}

/** The input event as it came in (minus the removed fields), marked with `error`. */
function unparsed(name: string, m: ParserInput, removeBefore: ReadonlySet<string>, ingestTs: number, limits: IngestLimits, error: string): ParsedEvent[] {
  const fields: Record<string, string> = {};
  for (const k in m.input) if (!removeBefore.has(k)) fields[k] = m.input[k]!;
  for (const k in m.after) fields[k] = m.after[k]!;
  const tags = { ...m.tags, type: name };
  return [{ tags, fallbackTags: tags, event: buildEvent({ rawstring: m.rawstring, timestamp: m.timestamp, timezone: m.timezone, fields, error }, ingestTs, limits) }];
}

/**
 * A stored parser whose script does not compile on this node (saved by a version whose language
 * took it): its events are kept and marked, as any parser failure, instead of failing the request.
 */
export class UncompilableParser implements MessageParser {
  readonly name: string;
  private readonly removeBefore: ReadonlySet<string>;
  constructor(
    def: CustomParserDef,
    private readonly problem: string,
  ) {
    this.name = def.name;
    this.removeBefore = new Set(def.fieldsToBeRemovedBeforeParsing);
  }

  parse(m: ParserInput, ingestTs: number, limits: IngestLimits): ParsedEvent[] {
    return unparsed(this.name, m, this.removeBefore, ingestTs, limits, `parser ${this.name} does not compile: ${this.problem}`);
  }
}

export class CustomParser implements MessageParser {
  readonly name: string;
  private readonly feed: Emit;
  private sink: Ev[] = [];
  private readonly toTag: ReadonlySet<string>;
  private readonly removeBefore: ReadonlySet<string>;

  /** Throws E_QUERY (with the position) when the script does not compile. */
  constructor(readonly def: CustomParserDef) {
    this.name = def.name;
    // now() reads the clock per event (see QueryContext.clock).
    const stages = compileParserStages(def.script, { start: -MAX_EPOCH_MS, end: MAX_EPOCH_MS, timeZoneOffsetMinutes: 0, now: Date.now(), live: false, clock: Date.now });
    this.feed = chainStages(stages, (e) => {
      this.sink.push(e);
    });
    this.toTag = new Set(def.fieldsToTag);
    this.removeBefore = new Set(def.fieldsToBeRemovedBeforeParsing);
  }

  /** Parses one message; returns the output events (none when the script drops the event). */
  parse(m: ParserInput, ingestTs: number, limits: IngestLimits, budget: ParserBudget): ParsedEvent[] {
    const { rawstring } = m;
    const kept: Record<string, string> = {};
    for (const k in m.input) if (!this.removeBefore.has(k)) kept[k] = m.input[k]!;
    const fallback = (error: string): ParsedEvent[] => unparsed(this.name, m, this.removeBefore, ingestTs, limits, error);
    if (budget.exhausted) return fallback(`parser ${this.name} was not run: the request used up its parser time (parsers.max_request_ms = ${budget.limits.maxRequestMs})`);

    const ev = new MapEvent();
    for (const k in kept) ev.set(k, kept[k]!);
    ev.set('@rawstring', rawstring);
    const out: Ev[] = [];
    this.sink = out;
    const t0 = performance.now();
    let failure: string | null = null;
    try {
      this.feed(ev);
    } catch (err) {
      failure = isLogsvcError(err) ? err.message : describeError(err);
    }
    // Counts toward the request's budget; a completed run keeps its output however long it took.
    budget.usedMs += performance.now() - t0;
    if (failure !== null) return fallback(`parser ${this.name} failed: ${failure}`);
    if (out.length > MAX_OUTPUT_EVENTS) return fallback(`parser ${this.name} made ${out.length} events from one, more than ${MAX_OUTPUT_EVENTS}`);
    return out.map((e) => this.toEvent(e, m, ingestTs, limits));
  }

  private toEvent(e: Ev, m: ParserInput, ingestTs: number, limits: IngestLimits): ParsedEvent {
    const baseTags = m.tags;
    const tags: Record<string, string> = { ...baseTags, type: this.name };
    const fields: Record<string, string> = {};
    let timestamp: number | null = m.timestamp;
    let timezone: string | null = m.timezone;
    let rawstring = m.rawstring;
    const problems: string[] = [];
    for (const name of e.names()) {
      const v = e.get(name);
      if (v === undefined || RESERVED.has(name)) continue;
      if (name === '@rawstring') rawstring = v;
      else if (name === '@timestamp') {
        const n = Number(v);
        if (v.trim() !== '' && Number.isFinite(n) && Math.abs(n) <= MAX_EPOCH_MS) timestamp = Math.trunc(n);
        else problems.push(`@timestamp ${JSON.stringify(v.slice(0, 64))} is not epoch milliseconds (use parseTimestamp())`);
      } else if (name === '@timezone') timezone = v;
      else if (name.startsWith('#') || this.toTag.has(name)) {
        const tag = name.startsWith('#') ? name.slice(1) : name;
        if (!TAG_NAME.test(tag) || tag === '__proto__') problems.push(`"${name.slice(0, 100)}" cannot be a tag name (letters, digits, "_", "-", ".", "@")`);
        else if (v.length > MAX_TAG_VALUE_CHARS) problems.push(`tag ${tag} is longer than ${MAX_TAG_VALUE_CHARS} characters`);
        else tags[tag] = v;
      } else if (name === '__proto__') Object.defineProperty(fields, name, { value: v, enumerable: true, writable: true, configurable: true });
      else fields[name] = v;
    }
    for (const k in m.after) fields[k] = m.after[k]!;
    if (Object.keys(tags).length > MAX_TAGS_PER_EVENT) {
      problems.push(`the parser made more than ${MAX_TAGS_PER_EVENT} tags`);
      for (const k of Object.keys(tags)) if (k !== 'type' && !Object.hasOwn(baseTags, k)) delete tags[k];
    }
    const error = problems.length === 0 ? null : `parser ${this.name}: ${problems.join('; ')}`;
    return { tags, fallbackTags: { ...baseTags, type: this.name }, event: buildEvent({ rawstring, timestamp, timezone, fields, error }, ingestTs, limits) };
  }
}

/** Compiled parsers one thread keeps, by what they are compiled from. */
const MAX_COMPILED = 64;
const compiled = new Map<string, MessageParser>();

/**
 * The key of a compiled parser: a hash of everything that shapes its output (not the save time,
 * which two saves within one millisecond share, leaving the older script in use).
 */
export function parserKey(def: CustomParserDef): string {
  return createHash('sha256').update(JSON.stringify([def.id, def.name, def.script, def.fieldsToTag, def.fieldsToBeRemovedBeforeParsing])).digest('base64url');
}

/** The compiled parser of `def`; an UncompilableParser when its script does not compile here. */
export function compiledParser(def: CustomParserDef): MessageParser {
  return compiledParserByKey(parserKey(def), () => def);
}

/** The compiled parser cached under `key` (= parserKey of the definition), compiling `load()` on a miss. */
export function compiledParserByKey(key: string, load: () => CustomParserDef): MessageParser {
  let p = compiled.get(key);
  if (p === undefined) {
    const def = load();
    try {
      p = new CustomParser(def);
    } catch (err) {
      p = new UncompilableParser(def, isLogsvcError(err) ? err.message : describeError(err));
    }
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, p);
  }
  return p;
}
