/**
 * Array functions (query-functions.md §1 category array, §2.15): arrays are plain fields `a[0]`,
 * `a[1]`, ... contiguous from 0; a function names the whole array `a[]` (or `a`). Functions stop at
 * the first gap. array:append, contains, dedup, drop, eval, exists, filter, length, regex, rename,
 * sort, union, intersection, reduceAll, reduceColumn, reduceRow; objectArray:eval and exists;
 * concatArray; bitfield:extractFlags*. Arrays are read up to MAX_ELEMENTS elements.
 */
import type { Expr, Pipeline } from '../ast.js';
import { compileRegex } from '../regex.js';
import type { Aggregator, Ev } from '../runtime.js';
import { MapEvent } from '../runtime.js';
import { parseNumber } from '../values.js';
import { statsOf } from './aggregates.js';
import type { BoundArgs } from './args.js';
import { pairsOf, row } from './common.js';
import { oneOf, valueDef } from './define.js';
import type { CompileEnv, FnDef } from './types.js';

export const MAX_ELEMENTS = 100_000;

/** `a[]`, `a`, `"`log:code`[]"` -> `a` / `log:code`. */
export function arrayBase(name: string): string {
  let n = name.endsWith('[]') ? name.slice(0, -2) : name;
  if (n.length >= 2 && n.startsWith('`') && n.endsWith('`')) n = n.slice(1, -1);
  return n.replace(/`([^`]*)`/g, '$1');
}

function baseArg(a: BoundArgs, name: string): string {
  const v = a.string(name);
  if (v === undefined) return a.fail(name, `function ${a.def.name} requires parameter ${name}`);
  return arrayBase(v);
}

/** The elements a[0], a[1], ... up to the first gap. */
export function elements(e: Ev, base: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < MAX_ELEMENTS; i++) {
    const v = e.get(`${base}[${i}]`);
    if (v === undefined) break;
    out.push(v);
  }
  return out;
}

/** Writes `values` as base[0..], removing elements of a longer old array only when `clear`. */
function writeArray(e: Ev, base: string, values: readonly string[], clear: boolean): void {
  values.forEach((v, i) => e.set(`${base}[${i}]`, v));
  if (clear) for (let i = values.length; i < MAX_ELEMENTS && e.has(`${base}[${i}]`); i++) e.remove(`${base}[${i}]`);
}

/** Names of the fields of element i of an object array (`base[i]` and `base[i].x`, `base[i][0]`). */
function elementFields(e: Ev, base: string, i: number): [string, string][] {
  const prefix = `${base}[${i}]`;
  const out: [string, string][] = [];
  for (const n of e.names()) {
    if (n === prefix || n.startsWith(`${prefix}.`) || n.startsWith(`${prefix}[`)) {
      const v = e.get(n);
      if (v !== undefined) out.push([n.slice(prefix.length), v]);
    }
  }
  return out;
}

function blockArg(a: BoundArgs, name: string): Pipeline {
  const raw = a.raw(name);
  if (raw === undefined || raw.k !== 'block') return a.fail(name, `parameter ${name} of function ${a.def.name} must be a { pipeline }`);
  return raw.pipeline;
}

const ARRAY = { name: 'array', type: 'string' as const, unnamed: true, required: true };

const append: FnDef = {
  name: 'array:append',
  params: [ARRAY, { name: 'values', type: 'expr', required: true }],
  stage(a, env) {
    const base = baseArg(a, 'array');
    const raw = a.raw('values')!;
    const fns = (raw.k === 'array' ? raw.items : [raw]).map((x) => env.expr(x));
    return {
      run(e, emit) {
        let i = elements(e, base).length;
        for (const f of fns) {
          const v = f(e);
          if (v !== undefined) e.set(`${base}[${i++}]`, v);
        }
        emit(e);
      },
    };
  },
};

const contains: FnDef = {
  name: 'array:contains',
  params: [ARRAY, { name: 'value', type: 'string', required: true }],
  filter(a) {
    const base = baseArg(a, 'array');
    const want = a.string('value')!;
    return (e) => elements(e, base).includes(want);
  },
};

const regexFn: FnDef = {
  name: 'array:regex',
  params: [ARRAY, { name: 'regex', type: 'regex', required: true }, { name: 'flags', type: 'string' }],
  filter(a) {
    const base = baseArg(a, 'array');
    const r = a.regex('regex')!;
    const cr = compileRegex(r.source, (a.string('flags') ?? '') + r.flags, (m) => a.fail('regex', m));
    return (e) => elements(e, base).some((v) => cr.re.test(v));
  },
};

const length = valueDef('array:length', [ARRAY], '_length', (a) => {
  const base = baseArg(a, 'array');
  return (e) => String(elements(e, base).length);
});

const dedup: FnDef = {
  name: 'array:dedup',
  params: [ARRAY, { name: 'asArray', type: 'string', default: '(the input array)' }],
  stage(a) {
    const base = baseArg(a, 'array');
    const out = a.has('asArray') ? arrayBase(a.string('asArray')!) : base;
    return {
      run(e, emit) {
        const els = elements(e, base);
        if (els.length > 0) writeArray(e, out, [...new Set(els)], true);
        emit(e);
      },
    };
  },
};

const drop: FnDef = {
  name: 'array:drop',
  params: [ARRAY],
  stage(a) {
    const base = baseArg(a, 'array');
    return {
      run(e, emit) {
        for (let i = 0; i < MAX_ELEMENTS && e.has(`${base}[${i}]`); i++) e.remove(`${base}[${i}]`);
        emit(e);
      },
    };
  },
};

const rename: FnDef = {
  name: 'array:rename',
  params: [ARRAY, { name: 'asArray', type: 'string', required: true }],
  stage(a) {
    const base = baseArg(a, 'array');
    const to = arrayBase(a.string('asArray')!);
    return {
      run(e, emit) {
        const els = elements(e, base);
        els.forEach((v, i) => {
          e.remove(`${base}[${i}]`);
          e.set(`${to}[${i}]`, v);
        });
        emit(e);
      },
    };
  },
};

const sort: FnDef = {
  name: 'array:sort',
  params: [ARRAY, { name: 'asArray', type: 'string', default: '(the input array)' }, { name: 'order', type: 'string', default: 'asc' }, { name: 'type', type: 'string', default: 'string' }],
  stage(a) {
    const base = baseArg(a, 'array');
    const out = a.has('asArray') ? arrayBase(a.string('asArray')!) : base;
    const order = oneOf(a, 'order', ['asc', 'ascending', 'desc', 'descending'] as const, 'asc');
    const desc = order.startsWith('desc');
    const type = oneOf(a, 'type', ['string', 'number'] as const, 'string');
    const cmp =
      type === 'number'
        ? (x: string, y: string): number => {
            const p = parseNumber(x);
            const q = parseNumber(y);
            if (p === undefined || q === undefined) return p === undefined ? (q === undefined ? 0 : 1) : -1;
            return p - q;
          }
        : (x: string, y: string): number => {
            const p = x.toLowerCase();
            const q = y.toLowerCase();
            return p < q ? -1 : p > q ? 1 : 0;
          };
    return {
      run(e, emit) {
        const els = elements(e, base).sort(cmp);
        if (desc) els.reverse();
        // Element-wise: surplus elements of a longer target array remain (query-functions.md).
        writeArray(e, out, els, false);
        emit(e);
      },
    };
  },
};

/** array:eval / array:filter / objectArray:eval: a pipeline run per element bound to `var`. */
function perElement(name: 'array:eval' | 'array:filter' | 'objectArray:eval'): FnDef {
  return {
    name,
    params: [ARRAY, { name: 'function', type: 'expr', required: true }, { name: 'asArray', type: 'string', required: name === 'objectArray:eval' }, { name: 'var', type: 'string', default: '(the input array name)' }],
    stage(a, env) {
      const base = baseArg(a, 'array');
      const out = a.has('asArray') ? arrayBase(a.string('asArray')!) : base;
      if (name === 'objectArray:eval' && out === base) a.fail('asArray', 'objectArray:eval: asArray must differ from the input array');
      const v = a.string('var', base);
      const run = env.subStages(blockArg(a, 'function'));
      const object = name === 'objectArray:eval';
      return {
        run(e, emit) {
          const results: string[] = [];
          const n = object ? countObjects(e, base) : elements(e, base).length;
          for (let i = 0; i < n; i++) {
            const scratch = new MapEvent(pairsOf(e));
            if (object) for (const [suffix, val] of elementFields(e, base, i)) scratch.set(`${v}${suffix}`, val);
            else scratch.set(v, e.get(`${base}[${i}]`)!);
            const got: Ev[] = [];
            run(scratch, got);
            if (name === 'array:filter') {
              if (got.length > 0) results.push(e.get(`${base}[${i}]`)!);
            } else {
              const r = got[0]?.get(out);
              if (r !== undefined) results.push(r);
            }
          }
          // The output array is compacted and overwrites one of that name.
          if (n > 0 || out !== base) writeArray(e, out, results, true);
          emit(e);
        },
      };
    },
  };
}

function countObjects(e: Ev, base: string): number {
  let n = 0;
  while (n < MAX_ELEMENTS && elementFields(e, base, n).length > 0) n++;
  return n;
}

function existsFn(name: 'array:exists' | 'objectArray:exists'): FnDef {
  return {
    name,
    params: [ARRAY, { name: 'condition', type: 'expr', required: true }, { name: 'var', type: 'string', default: '(the input array name)' }],
    filter(a, env) {
      const base = baseArg(a, 'array');
      const v = a.string('var', base);
      const cond = env.subFilter(blockArg(a, 'condition'));
      const object = name === 'objectArray:exists';
      return (e) => {
        const n = object ? countObjects(e, base) : elements(e, base).length;
        for (let i = 0; i < n; i++) {
          const scratch = new MapEvent(pairsOf(e));
          if (object) for (const [suffix, val] of elementFields(e, base, i)) scratch.set(`${v}${suffix}`, val);
          else scratch.set(v, e.get(`${base}[${i}]`)!);
          if (cond(scratch)) return true;
        }
        return false;
      };
    },
  };
}

const concatArray = valueDef(
  'concatArray',
  [
    { name: 'field', type: 'string', unnamed: true, required: true },
    { name: 'from', type: 'number', default: '0' },
    { name: 'to', type: 'number' },
    { name: 'separator', type: 'string', default: '' },
    { name: 'prefix', type: 'string', default: '' },
    { name: 'suffix', type: 'string', default: '' },
  ],
  '_concatArray',
  (a) => {
    const base = baseArg(a, 'field');
    const from = a.number('from', 0);
    const to = a.number('to');
    const sep = a.string('separator', '');
    const pre = a.string('prefix', '');
    const suf = a.string('suffix', '');
    return (e) => {
      const els = elements(e, base);
      if (els.length === 0) return undefined;
      const last = to === undefined ? els.length - 1 : Math.min(to, els.length - 1);
      const picked = els.slice(Math.max(0, from), last + 1);
      return pre + picked.join(sep) + suf;
    };
  },
);

// --- aggregates over arrays ---------------------------------------------------------------------

const MAX_SET = 10_000;

function setAgg(name: 'array:union' | 'array:intersection'): FnDef {
  const def = name === 'array:union' ? '_union' : '_intersection';
  return {
    name,
    params: [ARRAY, { name: 'as', type: 'string', default: def }],
    agg(a) {
      const base = baseArg(a, 'array');
      const as = arrayBase(a.string('as', def));
      // union: every value; intersection: values in every event (null = no event yet).
      const agg: Aggregator<{ s: string[] | null }> = {
        name,
        init: () => ({ s: null }),
        add(st, e) {
          const els = new Set(elements(e, base));
          if (name === 'array:union') {
            const cur = new Set(st.s ?? []);
            for (const v of els) if (cur.size < MAX_SET) cur.add(v);
            st.s = [...cur];
          } else st.s = st.s === null ? [...els] : st.s.filter((v) => els.has(v));
        },
        merge(into, o) {
          if (o.s === null) return;
          if (into.s === null) into.s = o.s;
          else if (name === 'array:union') into.s = [...new Set([...into.s, ...o.s])].slice(0, MAX_SET);
          else {
            const other = new Set(o.s);
            into.s = into.s.filter((v) => other.has(v));
          }
        },
        finish: (st) => [row((st.s ?? []).slice().sort().map((v, i) => [`${as}[${i}]`, v] as [string, string]))],
      };
      return { agg, outputs: null, oneRow: true };
    },
  };
}

function elementAgg(a: BoundArgs, env: CompileEnv): { sub: Aggregator<unknown>; v: string } {
  const specs = a.aggs('function')!;
  const spec = statsOf(specs, a.span('function'), env);
  const v = a.string('var')!;
  return { sub: spec.agg, v };
}

const reduceAll: FnDef = {
  name: 'array:reduceAll',
  params: [ARRAY, { name: 'function', type: 'aggs', required: true }, { name: 'var', type: 'string', required: true }],
  agg(a, env) {
    const base = baseArg(a, 'array');
    const { sub, v } = elementAgg(a, env);
    const agg: Aggregator<unknown> = {
      name: 'array:reduceAll',
      init: () => sub.init(),
      add(st, e) {
        for (const x of elements(e, base)) sub.add(st, new MapEvent([[v, x]]));
      },
      merge: (into, o) => sub.merge(into, o),
      finish: (st) => sub.finish(st),
    };
    return { agg, outputs: null, oneRow: true };
  },
};

const reduceColumn: FnDef = {
  name: 'array:reduceColumn',
  params: [ARRAY, { name: 'function', type: 'aggs', required: true }, { name: 'var', type: 'string', required: true }, { name: 'as', type: 'string', default: '_reduceColumn' }],
  agg(a, env) {
    const base = baseArg(a, 'array');
    const as = arrayBase(a.string('as', '_reduceColumn'));
    const { sub, v } = elementAgg(a, env);
    const agg: Aggregator<unknown[]> = {
      name: 'array:reduceColumn',
      init: () => [],
      add(st, e) {
        elements(e, base).forEach((x, i) => {
          if (i >= MAX_SET) return;
          if (st[i] === undefined) st[i] = sub.init();
          sub.add(st[i], new MapEvent([[v, x]]));
        });
      },
      merge(into, o) {
        o.forEach((s, i) => {
          if (into[i] === undefined) into[i] = s;
          else sub.merge(into[i], s);
        });
      },
      finish(st) {
        const cols = st.map((s) => sub.finish(s).map((r) => pairsOf(r).map(([, val]) => val)[0]));
        const height = Math.max(1, ...cols.map((c) => c.length));
        const out: Ev[] = [];
        for (let r = 0; r < height; r++) {
          const pairs: [string, string][] = [];
          cols.forEach((c, i) => {
            const val = c[r];
            if (val !== undefined) pairs.push([`${as}[${i}]`, val]);
          });
          out.push(row(pairs));
        }
        return out;
      },
    };
    return { agg, outputs: null, oneRow: false };
  },
};

const reduceRow: FnDef = {
  name: 'array:reduceRow',
  params: [ARRAY, { name: 'function', type: 'aggs', required: true }, { name: 'var', type: 'string', required: true }, { name: 'as', type: 'string', default: '_reduceRow' }],
  stage(a, env) {
    const base = baseArg(a, 'array');
    const { sub, v } = elementAgg(a, env);
    const as = a.string('as');
    return {
      run(e, emit) {
        const st = sub.init();
        for (const x of elements(e, base)) sub.add(st, new MapEvent([[v, x]]));
        const r = sub.finish(st)[0];
        if (r !== undefined) {
          const pairs = pairsOf(r);
          if (as !== undefined && pairs.length === 1) e.set(as, pairs[0]![1]);
          else for (const [k, val] of pairs) e.set(k, val);
        }
        emit(e);
      },
    };
  },
};

// --- bit fields ---------------------------------------------------------------------------------

/** `[[0, "a"], [1, "b"]]` -> [[0, "a"], [1, "b"]]. */
function flagPairs(a: BoundArgs, name: string): [number, string][] {
  const raw = a.raw(name);
  if (raw === undefined || raw.k !== 'array') return a.fail(name, `parameter ${name} of function ${a.def.name} must be [[bit, name], ...]`);
  return raw.items.map((it) => {
    if (it.k !== 'array' || it.items.length !== 2) return a.env.fail(it.span, `${a.def.name}: each element of ${name} must be a pair [bit, name]`);
    const [b, n] = it.items as [Expr, Expr];
    const bit = b.k === 'num' ? b.v : b.k === 'str' || b.k === 'ident' ? Number(b.k === 'str' ? b.v : b.name) : NaN;
    const label = n.k === 'str' ? n.v : n.k === 'ident' ? n.name : n.k === 'num' ? n.text : null;
    if (!Number.isInteger(bit) || bit < 0 || bit > 63 || label === null) return a.env.fail(it.span, `${a.def.name}: each element of ${name} must be a pair [bit 0-63, name]`);
    return [bit, label];
  });
}

function bits(v: string | undefined): bigint | undefined {
  if (v === undefined) return undefined;
  const t = v.trim();
  if (!/^(?:0x[0-9a-fA-F]+|\d+)$/.test(t)) return undefined;
  return BigInt(t);
}

const extractFlags: FnDef = {
  name: 'bitfield:extractFlags',
  params: [
    { name: 'field', type: 'field', required: true },
    { name: 'output', type: 'expr', required: true },
    { name: 'onlyTrue', type: 'bool', default: 'false' },
  ],
  stage(a) {
    const field = a.string('field')!;
    const pairs = flagPairs(a, 'output');
    const onlyTrue = a.bool('onlyTrue', false);
    return {
      run(e, emit) {
        const b = bits(e.get(field));
        if (b !== undefined) {
          for (const [bit, name] of pairs) {
            const set = ((b >> BigInt(bit)) & 1n) === 1n;
            if (set || !onlyTrue) e.set(name, String(set));
          }
        }
        emit(e);
      },
    };
  },
};

function setFlags(a: BoundArgs): (e: Ev) => string[] | undefined {
  const field = a.string('field')!;
  const pairs = flagPairs(a, 'flagNames').sort((x, y) => x[0] - y[0]);
  return (e) => {
    const b = bits(e.get(field));
    if (b === undefined) return undefined;
    return pairs.filter(([bit]) => ((b >> BigInt(bit)) & 1n) === 1n).map(([, n]) => n);
  };
}

const extractFlagsAsArray: FnDef = {
  name: 'bitfield:extractFlagsAsArray',
  params: [
    { name: 'field', type: 'field', required: true },
    { name: 'flagNames', type: 'expr', required: true },
    { name: 'asArray', type: 'string', default: '_flags[]' },
  ],
  stage(a) {
    const f = setFlags(a);
    const as = arrayBase(a.string('asArray', '_flags[]'));
    return {
      run(e, emit) {
        const names = f(e);
        if (names !== undefined) writeArray(e, as, names, true);
        emit(e);
      },
    };
  },
};

const extractFlagsAsString = valueDef(
  'bitfield:extractFlagsAsString',
  [
    { name: 'field', type: 'field', required: true },
    { name: 'flagNames', type: 'expr', required: true },
    { name: 'separator', type: 'string', default: ' ' },
  ],
  '_flags',
  (a) => {
    const f = setFlags(a);
    const sep = a.string('separator', ' ');
    return (e) => f(e)?.join(sep);
  },
);

export const arrayFunctions: FnDef[] = [
  append,
  contains,
  dedup,
  drop,
  perElement('array:eval'),
  existsFn('array:exists'),
  perElement('array:filter'),
  setAgg('array:intersection'),
  length,
  reduceAll,
  reduceColumn,
  reduceRow,
  regexFn,
  rename,
  sort,
  setAgg('array:union'),
  perElement('objectArray:eval'),
  existsFn('objectArray:exists'),
  concatArray,
  extractFlags,
  extractFlagsAsArray,
  extractFlagsAsString,
];
