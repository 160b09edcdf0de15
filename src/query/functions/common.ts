/**
 * Small pieces shared by the function definitions: building result rows, ordering keys the way
 * results are printed, reading an event into plain pairs for states, and reading a `field`-style
 * argument that may also be a literal or an expression inside `:=`.
 */
import type { Expr } from '../ast.js';
import { entriesOf, MapEvent, type Ev } from '../runtime.js';
import { parseNumber } from '../values.js';
import type { BoundArgs } from './args.js';
import type { ValueFn } from './types.js';

export function row(pairs: Iterable<readonly [string, string]>): MapEvent {
  return new MapEvent(pairs);
}

/** Orders two values: numerically when both are numbers, else by code units. */
export function compareValues(a: string, b: string): number {
  const x = parseNumber(a);
  const y = parseNumber(b);
  if (x !== undefined && y !== undefined) return x - y;
  return a < b ? -1 : a > b ? 1 : 0;
}

export function compareKeys(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < a.length && i < b.length; i++) {
    const c = compareValues(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

/** An event as [name, value] pairs (what states keep: structured-clone safe). */
export function pairsOf(e: Ev): [string, string][] {
  return entriesOf(e);
}

/** A deterministic text for tie-breaking identical sort keys (so merges do not depend on order). */
export function pairsKey(p: readonly (readonly [string, string])[]): string {
  return JSON.stringify(p);
}

/**
 * The value a `field`-style argument denotes: a bare or quoted name, or a number, reads that field
 * (function parameters named field take field names in the product); any other expression, such
 * as a nested call, is evaluated.
 */
export function fieldValue(a: BoundArgs, name: string): ValueFn | undefined {
  const raw: Expr | undefined = a.raw(name);
  if (raw === undefined) return undefined;
  // A number names a field too: `math:cos(1)` reads the field `1` (query-functions.md §1 notation).
  if (raw.k === 'ident' || raw.k === 'str' || raw.k === 'num') {
    const f = raw.k === 'ident' ? raw.name : raw.k === 'num' ? raw.text : raw.v;
    return (e) => e.get(f);
  }
  return a.env.expr(raw);
}
