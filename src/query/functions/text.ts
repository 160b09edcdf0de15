/**
 * Text functions (query-functions.md §1, string category, new in this module): text:contains,
 * text:startsWith, text:endsWith, text:length (grapheme clusters), text:positionOf,
 * text:substring, text:trim, text:editDistance(AsArray), urlEncode, urlDecode, stripAnsiCodes,
 * json:prettyPrint, xml:prettyPrint, writeJson, getField, setField. text:* arguments are
 * expressions: a bare name reads the field, a quoted string is a literal. Outputs are bounded by
 * their inputs (at most a constant factor), so no input can make one grow without bound.
 */
import type { Ev } from '../runtime.js';
import { parseNumber } from '../values.js';
import type { BoundArgs } from './args.js';
import { addField, argValue, fieldName, oneOf, setter, valueDef } from './define.js';
import type { CompileEnv, FnDef, ValueFn } from './types.js';

/** Made when a query first uses text:length: its ICU break data stays out of an idle node's memory. */
let segmenter: Intl.Segmenter | null = null;

function exprArg(a: BoundArgs, env: CompileEnv, name: string): ValueFn {
  const raw = a.raw(name);
  if (raw === undefined) return a.fail(name, `function ${a.def.name} requires parameter ${name}`);
  return env.expr(raw);
}

function optExpr(a: BoundArgs, env: CompileEnv, name: string): ValueFn | undefined {
  const raw = a.raw(name);
  return raw === undefined ? undefined : env.expr(raw);
}

function textTest(name: string, test: (s: string, sub: string) => boolean): FnDef {
  const params = [
    { name: 'string', type: 'expr' as const, unnamed: true, required: true },
    { name: 'substring', type: 'expr' as const, required: true },
  ];
  const make = (a: BoundArgs, env: CompileEnv): ((e: Ev) => boolean | undefined) => {
    const s = exprArg(a, env, 'string');
    const sub = exprArg(a, env, 'substring');
    return (e) => {
      const x = s(e);
      const y = sub(e);
      return x === undefined || y === undefined ? undefined : test(x, y);
    };
  };
  return {
    name,
    params,
    filter: (a, env) => {
      const f = make(a, env);
      return (e) => f(e) === true;
    },
    value: (a, env) => {
      const f = make(a, env);
      return (e) => {
        const r = f(e);
        return r === undefined ? undefined : String(r);
      };
    },
  };
}

const textLength = valueDef('text:length', [{ name: 'string', type: 'expr', unnamed: true, required: true }], '_length', (a, env) => {
  const s = exprArg(a, env, 'string');
  const graphemes = (segmenter ??= new Intl.Segmenter('en', { granularity: 'grapheme' }));
  return (e) => {
    const v = s(e);
    if (v === undefined) return undefined;
    let n = 0;
    for (const _ of graphemes.segment(v)) n++;
    return String(n);
  };
});

function intOf(v: ValueFn | undefined, e: Ev, def: number): number | undefined {
  if (v === undefined) return def;
  const n = parseNumber(v(e));
  return n === undefined || !Number.isInteger(n) ? undefined : n;
}

/** Position of the n-th occurrence from `begin`; -1 when there is none [I]. */
const positionOf = valueDef(
  'text:positionOf',
  [
    { name: 'string', type: 'expr', unnamed: true, required: true },
    { name: 'character', type: 'expr', required: true },
    { name: 'begin', type: 'expr', default: '0' },
    { name: 'occurrence', type: 'expr', default: '1' },
  ],
  '_position',
  (a, env) => {
    const s = exprArg(a, env, 'string');
    const c = exprArg(a, env, 'character');
    const b = optExpr(a, env, 'begin');
    const o = optExpr(a, env, 'occurrence');
    return (e) => {
      const str = s(e);
      const ch = c(e);
      const begin = intOf(b, e, 0);
      const occ = intOf(o, e, 1);
      if (str === undefined || ch === undefined || ch === '' || begin === undefined || occ === undefined || occ < 1 || begin < 0) return undefined;
      let at = begin - 1;
      for (let i = 0; i < occ; i++) {
        at = str.indexOf(ch, at + 1);
        if (at < 0) return '-1';
      }
      return String(at);
    };
  },
);

const substring = valueDef(
  'text:substring',
  [
    { name: 'string', type: 'expr', unnamed: true, required: true },
    { name: 'begin', type: 'expr', default: '0' },
    { name: 'end', type: 'expr' },
  ],
  '_string',
  (a, env) => {
    const s = exprArg(a, env, 'string');
    const b = optExpr(a, env, 'begin');
    const en = optExpr(a, env, 'end');
    return (e) => {
      const str = s(e);
      if (str === undefined) return undefined;
      const begin = intOf(b, e, 0);
      const end = intOf(en, e, str.length);
      if (begin === undefined || end === undefined || begin < 0 || end < begin) return undefined;
      return str.slice(begin, Math.min(end, str.length));
    };
  },
);

const trim = valueDef(
  'text:trim',
  [
    { name: 'field', type: 'expr', unnamed: true, required: true },
    { name: 'mode', type: 'string', default: 'both' },
  ],
  '_trim',
  (a, env) => {
    const s = exprArg(a, env, 'field');
    const mode = oneOf(a, 'mode', ['both', 'start', 'end'] as const, 'both');
    return (e) => {
      const v = s(e);
      if (v === undefined) return undefined;
      return mode === 'start' ? v.trimStart() : mode === 'end' ? v.trimEnd() : v.trim();
    };
  },
);

/**
 * Optimal-string-alignment distance (Levenshtein plus adjacent transpositions when allowed),
 * stopping at `max`: the result is min(distance, max). O(len × (2·max + 1)) by a banded table.
 */
export function editDistance(x: string, y: string, max: number, transpositions: boolean): number {
  const a = [...x];
  const b = [...y];
  if (Math.abs(a.length - b.length) >= max) return max;
  const n = a.length;
  const m = b.length;
  const INF = max + 1;
  let prev2: number[] = new Array(m + 1).fill(INF);
  let prev: number[] = Array.from({ length: m + 1 }, (_, j) => (j <= max ? j : INF));
  for (let i = 1; i <= n; i++) {
    const cur: number[] = new Array(m + 1).fill(INF);
    cur[0] = i <= max ? i : INF;
    const lo = Math.max(1, i - max);
    const hi = Math.min(m, i + max);
    let best = cur[0]!;
    for (let j = lo; j <= hi; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (transpositions && i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, prev2[j - 2]! + 1);
      cur[j] = Math.min(v, INF);
      if (cur[j]! < best) best = cur[j]!;
    }
    if (best >= max) return max;
    prev2 = prev;
    prev = cur;
  }
  return Math.min(prev[m]!, max);
}

function editParams(a: BoundArgs): { max: number; trans: boolean; fold: (s: string) => string } {
  const max = a.number('maxDistance')!;
  if (!Number.isInteger(max) || max < 1 || max > 100) a.fail('maxDistance', `${a.def.name}: maxDistance must be a whole number from 1 to 100`);
  const trans = a.bool('allowTranspositions', true);
  const ic = a.bool('ignoreCase', false);
  return { max, trans, fold: ic ? (s) => s.toLowerCase() : (s) => s };
}

const EDIT_COMMON = [
  { name: 'target', type: 'expr' as const, required: true },
  { name: 'maxDistance', type: 'number' as const, required: true },
  { name: 'allowTranspositions', type: 'bool' as const, default: 'true' },
  { name: 'ignoreCase', type: 'bool' as const, default: 'false', aliases: ['caseInsensitive'] },
];

const editDistanceFn = valueDef('text:editDistance', [...EDIT_COMMON, { name: 'reference', type: 'expr', required: true }], '_distance', (a, env) => {
  const t = exprArg(a, env, 'target');
  const r = exprArg(a, env, 'reference');
  const p = editParams(a);
  return (e) => {
    const x = t(e);
    const y = r(e);
    return x === undefined || y === undefined ? undefined : String(editDistance(p.fold(x), p.fold(y), p.max, p.trans));
  };
});

const editDistanceAsArray: FnDef = {
  name: 'text:editDistanceAsArray',
  params: [...EDIT_COMMON, { name: 'references', type: 'expr', required: true }, { name: 'asArray', type: 'string', default: '_distance' }],
  stage(a, env) {
    const t = exprArg(a, env, 'target');
    const raw = a.raw('references')!;
    const refs = (raw.k === 'array' ? raw.items : [raw]).map((x) => env.expr(x));
    const p = editParams(a);
    const as = a.string('asArray', '_distance');
    return {
      run(e, emit) {
        const x = t(e);
        if (x !== undefined) {
          let i = 0;
          for (const r of refs) {
            const y = r(e);
            if (y === undefined) continue;
            e.set(`${as}[${i}].reference`, y);
            e.set(`${as}[${i}].distance`, String(editDistance(p.fold(x), p.fold(y), p.max, p.trans)));
            i++;
          }
        }
        emit(e);
      },
    };
  },
};

// --- URL and ANSI ----------------------------------------------------------------------------------

const urlEncode = valueDef(
  'urlEncode',
  [
    { name: 'field', type: 'field', unnamed: true, required: true },
    { name: 'type', type: 'string', default: 'full' },
  ],
  '_urlencode',
  (a) => {
    const v = argValue(a, 'field');
    // Form encoding (space as +), as the product's examples show.
    return (e) => {
      const s = v(e);
      return s === undefined ? undefined : encodeURIComponent(s).replace(/%20/g, '+').replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    };
  },
);

const urlDecode = valueDef('urlDecode', [{ name: 'field', type: 'field', unnamed: true, required: true }], '_urldecode', (a) => {
  const v = argValue(a, 'field');
  return (e) => {
    const s = v(e);
    if (s === undefined) return undefined;
    try {
      return decodeURIComponent(s.replace(/\+/g, ' '));
    } catch {
      return undefined;
    }
  };
});

const ANSI = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)|[@-Z\\-_])/g;

const stripAnsiCodes: FnDef = {
  name: 'stripAnsiCodes',
  params: [
    { name: 'field', type: 'field', unnamed: true, default: '@rawstring' },
    { name: 'as', type: 'string', default: '(the input field)' },
  ],
  stage(a) {
    const field = fieldName(a) ?? '@rawstring';
    const as = a.string('as', field);
    return setter(as, (e) => e.get(field)?.replace(ANSI, ''));
  },
};

// --- JSON and XML ------------------------------------------------------------------------------------

const jsonPrettyPrint: FnDef = {
  name: 'json:prettyPrint',
  params: [
    { name: 'field', type: 'field', unnamed: true, default: '@rawstring' },
    { name: 'as', type: 'string', default: '(the input field)' },
    { name: 'step', type: 'number', default: '2' },
    { name: 'strict', type: 'bool', default: 'false' },
  ],
  stage(a) {
    const field = fieldName(a) ?? '@rawstring';
    const as = a.string('as', field);
    const step = a.number('step', 2);
    if (!Number.isInteger(step) || step < 0 || step > 10) a.fail('step', 'json:prettyPrint: step must be a whole number from 0 to 10');
    const strict = a.bool('strict', false);
    return setter(as, (e) => {
      const s = e.get(field);
      if (s === undefined) return undefined;
      try {
        return JSON.stringify(JSON.parse(s), null, step);
      } catch {
        return strict ? undefined : s;
      }
    });
  },
};

/** Re-indents XML by its tags (no DTD or entity handling); null when the tags do not balance. */
export function prettyXml(s: string, step: number): string | null {
  const tokens = s.match(/<!\[CDATA\[[\s\S]*?\]\]>|<!--[\s\S]*?-->|<[^>]+>|[^<]+/g);
  if (tokens === null) return null;
  const pad = ' '.repeat(step);
  const lines: string[] = [];
  const stack: string[] = [];
  for (const tok of tokens) {
    const t = tok.trim();
    if (t === '') continue;
    if (t.startsWith('</')) {
      const name = /^<\/\s*([^\s>]+)/.exec(t)?.[1];
      if (name === undefined || stack.pop() !== name) return null;
      const last = lines[lines.length - 1];
      const open = `${pad.repeat(stack.length)}<${name}`;
      if (last !== undefined && last.startsWith(open) && !last.includes('</') && /^<[^>]*>[^<]*$/.test(last.trimStart()) && !last.trimStart().startsWith('<?')) lines[lines.length - 1] = last + t;
      else lines.push(pad.repeat(stack.length) + t);
    } else if (t.startsWith('<?') || t.startsWith('<!') || t.endsWith('/>')) {
      lines.push(pad.repeat(stack.length) + t);
    } else if (t.startsWith('<')) {
      const name = /^<\s*([^\s>/]+)/.exec(t)?.[1];
      if (name === undefined) return null;
      lines.push(pad.repeat(stack.length) + t);
      stack.push(name);
    } else {
      const last = lines.length - 1;
      if (last >= 0 && /^\s*<[^/?!][^>]*>$/.test(lines[last]!)) lines[last] += t;
      else lines.push(pad.repeat(stack.length) + t);
    }
  }
  return stack.length === 0 ? lines.join('\n') : null;
}

const xmlPrettyPrint: FnDef = {
  name: 'xml:prettyPrint',
  params: [
    { name: 'field', type: 'field', unnamed: true, default: '@rawstring' },
    { name: 'as', type: 'string', default: '(the input field)' },
    { name: 'step', type: 'number', default: '2' },
    { name: 'strict', type: 'bool', default: 'false' },
    { name: 'width', type: 'number', default: '80' },
  ],
  stage(a) {
    const field = fieldName(a) ?? '@rawstring';
    const as = a.string('as', field);
    const step = a.number('step', 2);
    if (!Number.isInteger(step) || step < 0 || step > 10) a.fail('step', 'xml:prettyPrint: step must be a whole number from 0 to 10');
    const strict = a.bool('strict', false);
    return setter(as, (e) => {
      const s = e.get(field);
      if (s === undefined) return undefined;
      const p = prettyXml(s, step);
      return p === null ? (strict ? undefined : s) : p;
    });
  },
};

/** Dotted and indexed names rebuilt as nested objects and arrays. */
function nest(pairs: [string, string][]): unknown {
  const root: Record<string, unknown> = {};
  for (const [name, value] of pairs) {
    const path: (string | number)[] = name.split(/\.|(?=\[)/).flatMap((p): (string | number)[] => {
      const m = /^\[(\d+)\]$/.exec(p);
      return m !== null ? [Number(m[1])] : p === '' ? [] : [p];
    });
    let cur: any = root;
    for (let i = 0; i < path.length; i++) {
      const k = path[i]!;
      if (i === path.length - 1) {
        if (typeof cur === 'object' && cur !== null) cur[k] = value;
        break;
      }
      const nextIsIndex = typeof path[i + 1] === 'number';
      if (typeof cur[k] !== 'object' || cur[k] === null) cur[k] = nextIsIndex ? [] : {};
      cur = cur[k];
    }
  }
  return root;
}

const writeJson: FnDef = {
  name: 'writeJson',
  params: [
    { name: 'field', type: 'fields', unnamed: true, default: '@rawstring' },
    { name: 'as', type: 'string', default: '_json' },
  ],
  stage(a) {
    const pats = a.list('field', ['@rawstring']);
    const as = a.string('as', '_json');
    const tests = pats.map((p) => {
      if (p.includes('*')) {
        const re = new RegExp(`^${p.split('*').map((x) => x.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
        return (n: string) => re.test(n);
      }
      return (n: string) => n.startsWith(p);
    });
    return {
      run(e, emit) {
        const pairs: [string, string][] = [];
        for (const n of e.names()) {
          if (!tests.some((t) => t(n))) continue;
          const v = e.get(n);
          if (v !== undefined) pairs.push([n, v]);
        }
        e.set(as, JSON.stringify(nest(pairs)));
        emit(e);
      },
      order: addField(as),
    };
  },
};

const getField = valueDef('getField', [{ name: 'source', type: 'expr', unnamed: true, required: true }], '_getField', (a, env) => {
  const s = exprArg(a, env, 'source');
  return (e) => {
    const name = s(e);
    return name === undefined ? undefined : e.get(name);
  };
});

const setField: FnDef = {
  name: 'setField',
  params: [
    { name: 'target', type: 'expr', required: true },
    { name: 'value', type: 'expr', required: true },
  ],
  stage(a, env) {
    const t = exprArg(a, env, 'target');
    const v = exprArg(a, env, 'value');
    return {
      run(e, emit) {
        const name = t(e);
        const value = v(e);
        if (name !== undefined && name !== '' && value !== undefined) e.set(name, value);
        emit(e);
      },
    };
  },
};

export const textFunctions: FnDef[] = [
  textTest('text:contains', (s, sub) => s.includes(sub)),
  textTest('text:startsWith', (s, sub) => s.startsWith(sub)),
  textTest('text:endsWith', (s, sub) => s.endsWith(sub)),
  textLength,
  positionOf,
  substring,
  trim,
  editDistanceFn,
  editDistanceAsArray,
  urlEncode,
  urlDecode,
  stripAnsiCodes,
  jsonPrettyPrint,
  xmlPrettyPrint,
  writeJson,
  getField,
  setField,
];
