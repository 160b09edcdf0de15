/**
 * Binding a call's arguments to a function's parameter spec: the unnamed first argument, names and
 * aliases, duplicates, required parameters, and the type of each value. Every problem is a query
 * error at the offending argument (or at the call when something is missing), naming the function
 * and the parameter in the product's words (`parameter func is not supported in function timeChart`).
 */
import type { Call, Expr, Span } from '../ast.js';
import type { AggSpec, CompileEnv, FnDef, ParamSpec, ParamType } from './types.js';

interface BoundArg {
  spec: ParamSpec;
  value: Expr;
  span: Span;
}

function describe(e: Expr): string {
  switch (e.k) {
    case 'str':
      return `"${e.v}"`;
    case 'num':
      return e.text;
    case 'ident':
      return e.name;
    case 'regex':
      return `/${e.source}/${e.flags}`;
    case 'array':
      return 'an array';
    case 'block':
      return 'a subquery';
    case 'call':
      return `${e.call.name}()`;
    default:
      return 'an expression';
  }
}

/** The text of a scalar argument (string, bare word or number), or null. */
function scalarText(e: Expr): string | null {
  if (e.k === 'str') return e.v;
  if (e.k === 'ident') return e.name;
  if (e.k === 'num') return e.text;
  if (e.k === 'unary' && e.op === '-' && e.expr.k === 'num') return `-${e.expr.text}`;
  return null;
}

export class BoundArgs {
  private readonly byName = new Map<string, BoundArg>();

  constructor(
    readonly def: FnDef,
    readonly call: Call,
    readonly env: CompileEnv,
  ) {
    const fn = def.name;
    if (def.freeArgs === true) return;
    for (const arg of call.args) {
      if (arg.subquery !== undefined) {
        if (def.namedSubqueries === true) continue;
        env.fail(arg.span, `function ${fn} takes no named subqueries (name: { ... }); only correlate() does`);
      }
      let spec: ParamSpec | undefined;
      if (arg.name === null) {
        spec = def.params.find((p) => p.unnamed === true);
        if (spec === undefined) env.fail(arg.span, `function ${fn} takes no unnamed argument; name the parameter (${def.params.map((p) => p.name).join(', ') || 'none'})`);
      } else {
        const lower = arg.name.toLowerCase();
        spec = def.params.find((p) => p.name.toLowerCase() === lower || (p.aliases ?? []).some((a) => a.toLowerCase() === lower));
        if (spec === undefined) env.fail(arg.span, `parameter ${arg.name} is not supported in function ${fn}`);
      }
      if (this.byName.has(spec.name)) env.fail(arg.span, `parameter ${spec.name} is given more than once in function ${fn}`);
      this.check(spec, arg.value, arg.span);
      this.byName.set(spec.name, { spec, value: arg.value, span: arg.span });
    }
    for (const p of def.params) {
      if (p.required === true && !this.byName.has(p.name)) env.fail(call.span, `function ${fn} requires parameter ${p.name}`);
    }
  }

  private bad(spec: ParamSpec, value: Expr, span: Span, want: string): never {
    return this.env.fail(span, `parameter ${spec.name} of function ${this.def.name} must be ${want}, not ${describe(value)}`);
  }

  private check(spec: ParamSpec, v: Expr, span: Span): void {
    const t: ParamType = spec.type;
    switch (t) {
      case 'string':
      case 'field':
        if (scalarText(v) === null) this.bad(spec, v, span, t === 'field' ? 'a field name' : 'a string');
        return;
      case 'number': {
        const s = scalarText(v);
        if (s === null || !Number.isFinite(Number(s)) || s.trim() === '') this.bad(spec, v, span, 'a number');
        return;
      }
      case 'limit': {
        const s = scalarText(v);
        if (s === null || (s.toLowerCase() !== 'max' && !(Number.isInteger(Number(s)) && Number(s) >= 0 && s.trim() !== ''))) this.bad(spec, v, span, 'a whole number or max');
        return;
      }
      case 'bool': {
        const s = scalarText(v)?.toLowerCase();
        if (s !== 'true' && s !== 'false') this.bad(spec, v, span, 'true or false');
        return;
      }
      case 'fields':
      case 'strings':
        if (v.k === 'array') {
          for (const it of v.items) if (scalarText(it) === null) this.bad(spec, it, it.span, t === 'fields' ? 'an array of field names' : 'an array of strings');
        } else if (scalarText(v) === null) this.bad(spec, v, span, t === 'fields' ? 'a field name or an array of them' : 'a string or an array of strings');
        return;
      case 'numbers': {
        const items = v.k === 'array' ? v.items : [v];
        for (const it of items) {
          const s = scalarText(it);
          if (s === null || !Number.isFinite(Number(s)) || s.trim() === '') this.bad(spec, it, it.span, 'a number or an array of numbers');
        }
        return;
      }
      case 'regex':
        if (v.k !== 'regex' && scalarText(v) === null) this.bad(spec, v, span, 'a regex');
        return;
      case 'aggs':
        if (v.k === 'array') {
          for (const it of v.items) if (it.k !== 'call') this.bad(spec, it, it.span, 'an aggregate function call');
        } else if (v.k !== 'call' && v.k !== 'block') this.bad(spec, v, span, 'an aggregate function, an array of them or a { subquery }');
        return;
      case 'expr':
        return;
    }
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** The span of an argument (the call's span when absent). */
  span(name: string): Span {
    return this.byName.get(name)?.span ?? this.call.span;
  }

  raw(name: string): Expr | undefined {
    return this.byName.get(name)?.value;
  }

  fail(name: string, message: string): never {
    return this.env.fail(this.span(name), message);
  }

  string(name: string): string | undefined;
  string(name: string, def: string): string;
  string(name: string, def?: string): string | undefined {
    const b = this.byName.get(name);
    return b === undefined ? def : scalarText(b.value)!;
  }

  number(name: string): number | undefined;
  number(name: string, def: number): number;
  number(name: string, def?: number): number | undefined {
    const b = this.byName.get(name);
    return b === undefined ? def : Number(scalarText(b.value));
  }

  /** A `limit`-typed argument: `max` gives `max`; values above `max` are an error. */
  limit(name: string, def: number, max: number): number {
    const b = this.byName.get(name);
    if (b === undefined) return Math.min(def, max);
    const s = scalarText(b.value)!;
    if (s.toLowerCase() === 'max') return max;
    const n = Number(s);
    if (n > max) this.env.fail(b.span, `parameter ${name} of function ${this.def.name} is ${n}, above the maximum ${max}`);
    return n;
  }

  bool(name: string, def: boolean): boolean {
    const b = this.byName.get(name);
    return b === undefined ? def : scalarText(b.value)!.toLowerCase() === 'true';
  }

  /** One name or an array of names as a list. */
  list(name: string): string[] | undefined;
  list(name: string, def: string[]): string[];
  list(name: string, def?: string[]): string[] | undefined {
    const b = this.byName.get(name);
    if (b === undefined) return def;
    return b.value.k === 'array' ? b.value.items.map((it) => scalarText(it)!) : [scalarText(b.value)!];
  }

  numbers(name: string, def: number[]): number[] {
    const b = this.byName.get(name);
    if (b === undefined) return def;
    return (b.value.k === 'array' ? b.value.items : [b.value]).map((it) => Number(scalarText(it)));
  }

  regex(name: string): { source: string; flags: string } | undefined {
    const b = this.byName.get(name);
    if (b === undefined) return undefined;
    return b.value.k === 'regex' ? { source: b.value.source, flags: b.value.flags } : { source: scalarText(b.value)!, flags: '' };
  }

  /** Aggregates of a `function=`-style argument (undefined when absent). */
  aggs(name: string): AggSpec[] | undefined {
    const b = this.byName.get(name);
    if (b === undefined) return undefined;
    const v = b.value;
    if (v.k === 'array') return v.items.map((it) => this.env.aggCall((it as Extract<Expr, { k: 'call' }>).call));
    if (v.k === 'call') return [this.env.aggCall(v.call)];
    if (v.k === 'block') return [this.env.aggPipeline(v.pipeline, v.span)];
    return this.env.fail(b.span, `parameter ${name} of function ${this.def.name} must be an aggregate function`);
  }
}
