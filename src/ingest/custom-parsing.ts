/**
 * Custom parsers on the ingest path: the repository's parsers an ingest task carries (plain data),
 * compiled once per thread, and the grouping of their output, whose tags may differ per event
 * (fieldsToTag) and so per datasource.
 */
import type { EventGroup } from '../events/index.js';
import { compiledParser, ParserBudget, type CustomParser, type CustomParserDef, type ParsedEvent, type ParserTimeLimits } from '../parsers/custom-parser.js';

export class CustomParsers {
  private readonly byName: ReadonlyMap<string, CustomParserDef>;
  readonly budget: ParserBudget;

  constructor(defs: readonly CustomParserDef[], limits: ParserTimeLimits) {
    this.byName = new Map(defs.map((d) => [d.name, d]));
    this.budget = new ParserBudget(limits);
  }

  /** The custom parser of that name, compiled; undefined when `name` is not one (built-ins then apply). */
  get(name: string | null | undefined): CustomParser | undefined {
    if (name === null || name === undefined) return undefined;
    const def = this.byName.get(name);
    return def === undefined ? undefined : compiledParser(def);
  }
}

/** Collects parsed events into one group per distinct tag set, in first-seen order. */
export class TagGroups {
  private readonly groups = new Map<string, EventGroup>();

  add(out: readonly ParsedEvent[]): void {
    for (const p of out) {
      const key = JSON.stringify(Object.entries(p.tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      const g = this.groups.get(key);
      if (g === undefined) this.groups.set(key, { tags: p.tags, events: [p.event] });
      else g.events.push(p.event);
    }
  }

  list(): EventGroup[] {
    return [...this.groups.values()];
  }
}
