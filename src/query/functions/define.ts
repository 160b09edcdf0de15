/**
 * Helpers for the many small functions of the themed modules: a per-event value function that is
 * both a stage (writing `as`, by default the function's output name) and a value inside
 * expressions; reading a number from a field-style argument; printing a computed number.
 */
import type { Ev } from '../runtime.js';
import { formatNumber, parseNumber } from '../values.js';
import type { BoundArgs } from './args.js';
import { fieldValue } from './common.js';
import type { CompileEnv, FnDef, ParamSpec, StageInfo, ValueFn } from './types.js';

/**
 * A value function: `name(args)` as a stage sets `as` (default `defAs`) when there is a value and
 * always emits; inside an expression it is the value. `as` is added to the parameters when absent.
 */
export function valueDef(name: string, params: ParamSpec[], defAs: string, make: (a: BoundArgs, env: CompileEnv) => ValueFn, extra: Partial<FnDef> = {}): FnDef {
  const ps = params.some((p) => p.name === 'as') ? params : [...params, { name: 'as', type: 'string' as const, default: defAs }];
  return { name, params: ps, valueAs: defAs, value: make, ...extra };
}

export function addField(name: string): StageInfo['order'] {
  return (prev) => (prev === null ? null : prev.includes(name) ? prev : [...prev, name]);
}

/** A stage that sets `as` to `v(e)` when there is a value and always emits. */
export function setter(as: string, v: ValueFn): { run: (e: Ev, emit: (e: Ev) => void) => void; order: StageInfo['order'] } {
  return {
    run(e, emit) {
      const r = v(e);
      if (r !== undefined) e.set(as, r);
      emit(e);
    },
    order: addField(as),
  };
}

/** The per-event value of a field-style argument (a field name, or an expression inside `:=`). */
export function argValue(a: BoundArgs, name: string): ValueFn {
  const v = fieldValue(a, name);
  if (v === undefined) return a.fail(name, `function ${a.def.name} requires parameter ${name}`);
  return v;
}

/** The per-event number of a field-style argument; undefined when absent or not a number. */
export function argNumber(a: BoundArgs, name: string): (e: Ev) => number | undefined {
  const v = argValue(a, name);
  return (e) => parseNumber(v(e));
}

/** A finite number printed as the product prints numbers; NaN and infinities are no value. */
export function out(n: number | undefined): string | undefined {
  return n === undefined || !Number.isFinite(n) ? undefined : formatNumber(n);
}

/** The `field` argument's name when it is a plain name (for outputs that default to the input field). */
export function fieldName(a: BoundArgs, name = 'field'): string | undefined {
  const raw = a.raw(name);
  if (raw === undefined) return undefined;
  if (raw.k === 'ident') return raw.name;
  if (raw.k === 'str') return raw.v;
  // A number names a field too (`math:cos(1)` reads the field `1`: query-functions.md §1).
  if (raw.k === 'num') return raw.text;
  return undefined;
}

/** One of `allowed` (case-insensitive) for a string parameter, or a query error naming them. */
export function oneOf<T extends string>(a: BoundArgs, name: string, allowed: readonly T[], def: T): T {
  const v = a.string(name);
  if (v === undefined) return def;
  const hit = allowed.find((x) => x.toLowerCase() === v.toLowerCase());
  if (hit === undefined) return a.fail(name, `parameter ${name} of function ${a.def.name} must be one of ${allowed.join(', ')}, not ${v}`);
  return hit;
}
