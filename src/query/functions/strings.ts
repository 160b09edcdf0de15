/**
 * Field and string transformations: format, formatTime, lowercase, lower, upper, length, concat,
 * default, rename, drop, split and splitString. Each changes the event in place and emits it;
 * a value that cannot be computed (a missing field, a non-number for %d) leaves the output unset.
 */
import { checkValueSize } from '../limits.js';
import { compileRegex } from '../regex.js';
import type { Ev } from '../runtime.js';
import { parseNumber } from '../values.js';
import type { BoundArgs } from './args.js';
import { fieldValue } from './common.js';
import { parsePrintf, printf } from './printf.js';
import { strftime } from './strftime.js';
import type { FnDef, StageInfo, ValueFn } from './types.js';
import { parseZone, UTC, type Zone } from './zones.js';

function addField(name: string): StageInfo['order'] {
  return (prev) => (prev === null ? null : prev.includes(name) ? prev : [...prev, name]);
}

/** A stage that sets `as` to `v(e)` when there is a value and always emits. */
function setter(as: string, v: ValueFn): { run: (e: Ev, emit: (e: Ev) => void) => void; order: StageInfo['order'] } {
  return {
    run(e, emit) {
      const r = v(e);
      if (r !== undefined) e.set(as, r);
      emit(e);
    },
    order: addField(as),
  };
}

export function readZone(a: BoundArgs, name: string, def: Zone): Zone {
  const t = a.string(name);
  if (t === undefined) return def;
  const z = parseZone(t);
  if (z === null) return a.fail(name, `parameter ${name} of function ${a.def.name}: unknown time zone ${t}`);
  return z;
}

// --- format / formatTime -------------------------------------------------------------------------

const format: FnDef = {
  name: 'format',
  params: [
    { name: 'format', type: 'string', unnamed: true, required: true },
    { name: 'field', type: 'fields', required: true },
    { name: 'as', type: 'string', default: '_format' },
    { name: 'timezone', type: 'string', default: 'UTC' },
  ],
  stage: (a) => setter(a.string('as', '_format'), formatter(a)),
  // Also a value in expressions: `format("%s%s", field=[a, a]) + 1` (query-functions.md §2.4).
  value: (a) => formatter(a),
};

function formatter(a: BoundArgs): ValueFn {
  const pieces = parsePrintf(a.string('format')!);
  if (typeof pieces === 'string') return a.fail('format', pieces);
  const fields = a.list('field')!;
  const zone = readZone(a, 'timezone', UTC);
  const beyond = pieces.find((p) => typeof p !== 'string' && p.arg !== null && p.arg >= fields.length);
  if (beyond !== undefined && typeof beyond !== 'string') a.fail('format', `format: %${beyond.arg! + 1}$ names argument ${beyond.arg! + 1}, and field= gives ${fields.length}`);
  return (e) => {
    const vals: string[] = [];
    for (const f of fields) {
      const v = e.get(f);
      if (v === undefined) return undefined;
      vals.push(v);
    }
    return printf(pieces, vals, zone);
  };
}

/** Epoch ms of a time value: `auto` reads values up to 100,000,000,000 as seconds. */
export function epochMs(v: string | undefined, unit: string): number | undefined {
  const n = parseNumber(v);
  if (n === undefined) return undefined;
  if (unit === 'seconds') return n * 1000;
  if (unit === 'milliseconds') return n;
  return Math.abs(n) <= 100_000_000_000 ? n * 1000 : n;
}

const formatTime: FnDef = {
  name: 'formatTime',
  params: [
    { name: 'format', type: 'string', unnamed: true, required: true },
    { name: 'as', type: 'string', required: true },
    { name: 'field', type: 'field', default: '@timestamp' },
    { name: 'timezone', type: 'string', default: 'UTC' },
    { name: 'locale', type: 'string' },
    { name: 'unit', type: 'string', default: 'auto' },
  ],
  stage(a) {
    const fmt = a.string('format')!;
    const as = a.string('as')!;
    const field = a.string('field', '@timestamp');
    const zone = readZone(a, 'timezone', UTC);
    const unit = a.string('unit', 'auto').toLowerCase();
    if (!['auto', 'milliseconds', 'seconds'].includes(unit)) a.fail('unit', `parameter unit of function formatTime must be auto, milliseconds or seconds, not ${unit}`);
    return setter(as, (e) => {
      const ms = epochMs(e.get(field), unit);
      return ms === undefined ? undefined : strftime(Math.floor(ms), fmt, zone);
    });
  },
};

// --- case -----------------------------------------------------------------------------------------

const lowercase: FnDef = {
  name: 'lowercase',
  params: [
    { name: 'field', type: 'field', unnamed: true, required: true },
    { name: 'include', type: 'string', default: 'values' },
    { name: 'locale', type: 'string' },
  ],
  stage(a) {
    const field = a.string('field')!;
    const include = a.string('include', 'values').toLowerCase();
    if (!['values', 'fields', 'both'].includes(include)) a.fail('include', `parameter include of function lowercase must be values, fields or both, not ${include}`);
    const values = include !== 'fields';
    const names = include !== 'values';
    const one = (e: Ev, n: string): void => {
      const v = e.get(n);
      if (v === undefined) return;
      const nv = values ? v.toLowerCase() : v;
      const nn = names ? n.toLowerCase() : n;
      if (nn !== n) e.remove(n);
      e.set(nn, nv);
    };
    return {
      run(e, emit) {
        if (field === '*') {
          for (const n of e.names()) if (!n.startsWith('@') && !n.startsWith('#')) one(e, n);
        } else one(e, field);
        emit(e);
      },
    };
  },
};

function caseFn(name: 'lower' | 'upper'): FnDef {
  const conv = name === 'lower' ? (s: string) => s.toLowerCase() : (s: string) => s.toUpperCase();
  return {
    name,
    params: [
      { name: 'field', type: 'expr', unnamed: true, required: true },
      { name: 'as', type: 'string', default: `_${name}` },
      { name: 'locale', type: 'string' },
      // lower() lists a `type` parameter the docs do not describe: accepted, no effect (as min/max type).
      ...(name === 'lower' ? [{ name: 'type', type: 'string' as const, default: '(accepted, no effect)' }] : []),
    ],
    value(a) {
      const v = fieldValue(a, 'field')!;
      return (e) => {
        const s = v(e);
        return s === undefined ? undefined : conv(s);
      };
    },
    stage(a) {
      // Output _lower/_upper unless as= names it (query-functions.md §1); the input is left as it was.
      const as = a.string('as', `_${name}`);
      const v = fieldValue(a, 'field')!;
      return setter(as, (e) => {
        const s = v(e);
        return s === undefined ? undefined : conv(s);
      });
    },
  };
}

// --- length / concat / default -------------------------------------------------------------------

const length: FnDef = {
  name: 'length',
  params: [
    { name: 'field', type: 'expr', unnamed: true, required: true },
    { name: 'as', type: 'string', default: '_length' },
  ],
  value(a) {
    const v = fieldValue(a, 'field')!;
    return (e) => {
      const s = v(e);
      return s === undefined ? undefined : String(s.length);
    };
  },
};

const concat: FnDef = {
  name: 'concat',
  params: [
    { name: 'field', type: 'fields', unnamed: true, required: true },
    { name: 'as', type: 'string', default: '_concat' },
  ],
  value(a) {
    const fields = a.list('field')!;
    return (e) => {
      let size = 0;
      for (const f of fields) size += e.get(f)?.length ?? 0;
      checkValueSize('concat', size);
      let out = '';
      for (const f of fields) out += e.get(f) ?? '';
      return out;
    };
  },
};

const defaultFn: FnDef = {
  name: 'default',
  params: [
    { name: 'value', type: 'string', unnamed: true, required: true },
    { name: 'field', type: 'fields', required: true },
    { name: 'replaceEmpty', type: 'bool', default: 'false' },
  ],
  stage(a) {
    const value = a.string('value')!;
    const fields = a.list('field')!;
    const replaceEmpty = a.bool('replaceEmpty', false);
    return {
      run(e, emit) {
        for (const f of fields) {
          const v = e.get(f);
          if (v === undefined || (replaceEmpty && v === '')) e.set(f, value);
        }
        emit(e);
      },
      order: (prev) => (prev === null ? null : [...prev, ...fields.filter((f) => !prev.includes(f))]),
    };
  },
};

// --- rename / drop -------------------------------------------------------------------------------

const rename: FnDef = {
  name: 'rename',
  params: [
    { name: 'field', type: 'expr', unnamed: true, required: true },
    { name: 'as', type: 'string' },
  ],
  stage(a) {
    const raw = a.raw('field')!;
    const pairs: [string, string][] = [];
    const nameOf = (x: typeof raw): string | null => (x.k === 'ident' ? x.name : x.k === 'str' ? x.v : null);
    if (raw.k === 'array') {
      if (a.has('as')) a.fail('as', 'rename: give as= with a single field, or field=[[old, new], ...] without it');
      for (const it of raw.items) {
        const from = it.k === 'array' && it.items.length === 2 ? nameOf(it.items[0]!) : null;
        const to = it.k === 'array' && it.items.length === 2 ? nameOf(it.items[1]!) : null;
        if (from === null || to === null) return a.env.fail(it.span, 'rename: each element of field must be a pair [old, new]');
        pairs.push([from, to]);
      }
    } else {
      const from = nameOf(raw);
      if (from === null) return a.fail('field', 'rename: field must be a field name or [[old, new], ...]');
      const to = a.string('as');
      if (to === undefined) return a.env.fail(a.call.span, 'function rename requires parameter as (or field=[[old, new], ...])');
      pairs.push([from, to]);
    }
    return {
      run(e, emit) {
        for (const [from, to] of pairs) {
          const v = e.get(from);
          if (v === undefined || from === to) continue;
          e.remove(from);
          e.set(to, v);
        }
        emit(e);
      },
      order: (prev) => (prev === null ? null : prev.map((n) => pairs.find((p) => p[0] === n)?.[1] ?? n)),
    };
  },
};

const drop: FnDef = {
  name: 'drop',
  params: [{ name: 'fields', type: 'fields', unnamed: true, required: true }],
  stage(a) {
    const fields = a.list('fields')!;
    return {
      run(e, emit) {
        for (const f of fields) e.remove(f);
        emit(e);
      },
      order: (prev) => (prev === null ? null : prev.filter((n) => !fields.includes(n))),
    };
  },
};

// --- split / splitString -------------------------------------------------------------------------

/** The array index a field name has right after `prefix` (`x[3]`, `x[3].y`), or -1. */
function indexAfter(name: string, prefix: string): { i: number; rest: string } | null {
  if (!name.startsWith(`${prefix}[`)) return null;
  const close = name.indexOf(']', prefix.length + 1);
  if (close < 0) return null;
  const digits = name.slice(prefix.length + 1, close);
  if (!/^\d{1,9}$/.test(digits)) return null;
  return { i: Number(digits), rest: name.slice(close + 1) };
}

const split: FnDef = {
  name: 'split',
  params: [
    { name: 'field', type: 'field', unnamed: true, default: '_events' },
    { name: 'strip', type: 'bool', default: 'false' },
  ],
  stage(a) {
    const field = a.string('field', '_events');
    const strip = a.bool('strip', false);
    return {
      run(e, emit) {
        const byIndex = new Map<number, [string, string][]>();
        const others: [string, string][] = [];
        for (const n of e.names()) {
          const v = e.get(n);
          if (v === undefined) continue;
          const at = indexAfter(n, field);
          if (at === null) {
            others.push([n, v]);
            continue;
          }
          let list = byIndex.get(at.i);
          if (list === undefined) byIndex.set(at.i, (list = []));
          // x[2].a -> x.a (or a with strip); x[2] -> x. A top-level array (field "") gives a.
          let name: string;
          if (strip || field === '') name = at.rest.startsWith('.') ? at.rest.slice(1) : at.rest === '' ? field : at.rest;
          else name = field + at.rest;
          list.push([name === '' ? '_value' : name, v]);
        }
        if (byIndex.size === 0) {
          emit(e);
          return;
        }
        const id = e.get('@id');
        for (const i of [...byIndex.keys()].sort((x, y) => x - y)) {
          const out = e.clone();
          for (const n of out.names()) if (indexAfter(n, field) !== null) out.remove(n);
          for (const [n, v] of byIndex.get(i)!) out.set(n, v);
          out.set('_index', String(i));
          if (id !== undefined) out.set('@id', `${id}__${i}`);
          emit(out);
        }
      },
    };
  },
};

const splitString: FnDef = {
  name: 'splitString',
  params: [
    { name: 'field', type: 'field', unnamed: true, default: '@rawstring' },
    { name: 'by', type: 'string', required: true },
    { name: 'index', type: 'number' },
    { name: 'as', type: 'string', default: '_splitstring' },
  ],
  stage(a) {
    const field = a.string('field', '@rawstring');
    const by = a.string('by')!;
    const cr = compileRegex(by, '', (m) => a.fail('by', m));
    const index = a.number('index');
    const as = a.string('as', '_splitstring');
    return {
      run(e, emit) {
        const v = e.get(field);
        if (v !== undefined) {
          const parts = v.split(cr.all);
          if (index !== undefined) {
            const i = index < 0 ? parts.length + index : index;
            const p = parts[i];
            if (p !== undefined) e.set(as, p);
          } else parts.forEach((p, i) => e.set(`${as}[${i}]`, p));
        }
        emit(e);
      },
    };
  },
};

export const stringFunctions: FnDef[] = [format, formatTime, lowercase, caseFn('lower'), caseFn('upper'), length, concat, defaultFn, rename, drop, split, splitString];
