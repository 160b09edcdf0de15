/**
 * Math functions (query-functions.md §1, category math): math:* one-argument functions, arctan2,
 * mod, pow, spherical2cartesian, round, geography:distance, unit:convert. A field that is missing or
 * not a number gives no output; so does a result that is not a finite number (log of -1).
 */
import { formatNumber, parseNumber } from '../values.js';
import { argNumber, argValue, fieldName, oneOf, out, setter, valueDef } from './define.js';
import type { FnDef, ParamSpec } from './types.js';

const FIELD: ParamSpec = { name: 'field', type: 'field', unnamed: true, required: true };

function unary(name: string, f: (x: number) => number): FnDef {
  const short = name.slice(name.indexOf(':') + 1);
  return valueDef(name, [FIELD], `_${short}`, (a) => {
    const x = argNumber(a, 'field');
    return (e) => {
      const v = x(e);
      return v === undefined ? undefined : out(f(v));
    };
  });
}

/** Java's floorMod on longs: the result has the divisor's sign. */
function floorMod(x: number, d: number): number {
  const r = x % d;
  return r !== 0 && (r < 0) !== (d < 0) ? r + d : r;
}

const unaries: FnDef[] = [
  unary('math:abs', Math.abs),
  unary('math:arccos', Math.acos),
  unary('math:arcsin', Math.asin),
  unary('math:arctan', Math.atan),
  unary('math:ceil', Math.ceil),
  unary('math:cos', Math.cos),
  unary('math:cosh', Math.cosh),
  unary('math:deg2rad', (x) => (x * Math.PI) / 180),
  unary('math:exp', Math.exp),
  unary('math:expm1', Math.expm1),
  unary('math:floor', Math.floor),
  unary('math:log', Math.log),
  unary('math:log10', Math.log10),
  unary('math:log1p', Math.log1p),
  unary('math:log2', Math.log2),
  unary('math:rad2deg', (x) => (x * 180) / Math.PI),
  unary('math:sin', Math.sin),
  unary('math:sinh', Math.sinh),
  unary('math:sqrt', Math.sqrt),
  unary('math:tan', Math.tan),
  unary('math:tanh', Math.tanh),
];
// math:cosh's field is not marked unnamed in the 1.202 docs; it is accepted unnamed like the others.

const arctan2 = valueDef(
  'math:arctan2',
  [
    { name: 'x', type: 'field', required: true },
    { name: 'y', type: 'field', required: true },
  ],
  '_arctan2',
  (a) => {
    const x = argNumber(a, 'x');
    const y = argNumber(a, 'y');
    return (e) => {
      const xv = x(e);
      const yv = y(e);
      return xv === undefined || yv === undefined ? undefined : out(Math.atan2(yv, xv));
    };
  },
);

const mod = valueDef(
  'math:mod',
  [FIELD, { name: 'divisor', type: 'number', required: true }],
  '_mod',
  (a) => {
    const x = argNumber(a, 'field');
    const d = Math.floor(a.number('divisor')!);
    if (d === 0) a.fail('divisor', 'math:mod: divisor must not be 0');
    return (e) => {
      const v = x(e);
      return v === undefined ? undefined : out(floorMod(Math.floor(v), d));
    };
  },
);

const pow = valueDef(
  'math:pow',
  [FIELD, { name: 'exponent', type: 'number', required: true }],
  '_pow',
  (a) => {
    const x = argNumber(a, 'field');
    const p = a.number('exponent')!;
    return (e) => {
      const v = x(e);
      return v === undefined ? undefined : out(v ** p);
    };
  },
);

const spherical2cartesian: FnDef = {
  name: 'math:spherical2cartesian',
  params: [
    { name: 'azimuth', type: 'field', required: true },
    { name: 'polar', type: 'field', required: true },
    { name: 'radius', type: 'field', default: '1.0' },
    { name: 'as', type: 'string', default: '_spherical2cartesian' },
  ],
  stage(a) {
    const az = argNumber(a, 'azimuth');
    const po = argNumber(a, 'polar');
    const rr = a.has('radius') ? argNumber(a, 'radius') : () => 1;
    const as = a.string('as', '_spherical2cartesian');
    return {
      run(e, emit) {
        const t = az(e);
        const p = po(e);
        const r = rr(e);
        if (t !== undefined && p !== undefined && r !== undefined) {
          // Polar angle measured from the xy-plane; z is up.
          const x = out(r * Math.cos(p) * Math.cos(t));
          const y = out(r * Math.cos(p) * Math.sin(t));
          const z = out(r * Math.sin(p));
          if (x !== undefined && y !== undefined && z !== undefined) {
            e.set(`${as}.x`, x);
            e.set(`${as}.y`, y);
            e.set(`${as}.z`, z);
          }
        }
        emit(e);
      },
    };
  },
};

const HOW = ['round', 'floor', 'ceil'] as const;

/** round(): a number to an integer (half up, as Java's Math.round); the input field unless as=. */
const round: FnDef = {
  name: 'round',
  params: [
    FIELD,
    { name: 'how', type: 'string', default: 'round' },
    { name: 'as', type: 'string', default: '(the input field)' },
  ],
  value(a) {
    const x = argNumber(a, 'field');
    const how = oneOf(a, 'how', HOW, 'round');
    const f = how === 'floor' ? Math.floor : how === 'ceil' ? Math.ceil : (v: number) => Math.floor(v + 0.5);
    return (e) => {
      const v = x(e);
      return v === undefined ? undefined : out(f(v));
    };
  },
  stage(a, env) {
    const as = a.string('as') ?? fieldName(a) ?? a.fail('as', 'round: give as= when field is not a field name');
    return setter(as, round.value!(a, env));
  },
};

const EARTH_RADIUS_M = 6_371_008.8;

/** geography:distance: great-circle distance in meters (haversine over the mean Earth radius). */
const distance = valueDef(
  'geography:distance',
  [
    { name: 'lat1', type: 'field', required: true },
    { name: 'lon1', type: 'field', required: true },
    { name: 'lat2', type: 'field', required: true },
    { name: 'lon2', type: 'field', required: true },
  ],
  '_distance',
  (a) => {
    const [la1, lo1, la2, lo2] = ['lat1', 'lon1', 'lat2', 'lon2'].map((n) => argNumber(a, n));
    const rad = (d: number): number => (d * Math.PI) / 180;
    return (e) => {
      const p1 = la1!(e);
      const l1 = lo1!(e);
      const p2 = la2!(e);
      const l2 = lo2!(e);
      if (p1 === undefined || l1 === undefined || p2 === undefined || l2 === undefined) return undefined;
      if (Math.abs(p1) > 90 || Math.abs(p2) > 90 || Math.abs(l1) > 180 || Math.abs(l2) > 180) return undefined;
      const h = Math.sin(rad(p2 - p1) / 2) ** 2 + Math.cos(rad(p1)) * Math.cos(rad(p2)) * Math.sin(rad(l2 - l1) / 2) ** 2;
      return out(2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h))));
    };
  },
);

// --- unit:convert ---------------------------------------------------------------------------------

const DECIMAL: Record<string, number> = { '': 1, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, m: 1e-3, u: 1e-6, µ: 1e-6, n: 1e-9 };
const BINARY: Record<string, number> = { '': 1, k: 1024, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4, P: 1024 ** 5, E: 1024 ** 6 };
/** Time units in seconds. */
const TIME: Record<string, number> = { s: 1, sec: 1, ms: 1e-3, us: 1e-6, µs: 1e-6, ns: 1e-9, min: 60, m: 60, h: 3600, hour: 3600, d: 86400, day: 86400 };

interface Quantity {
  n: number;
  base: string;
}

/** `514ms` -> {0.514, s}; `4KiB` -> {4096, B}; `3` with `from` -> that unit. Null when unreadable. */
function readQuantity(text: string, binary: boolean): Quantity | null {
  const m = /^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-zµ/]*)\s*$/.exec(text);
  if (m === null) return null;
  const n = Number(m[1]);
  const unit = m[2]!;
  return scaleUnit(n, unit, binary);
}

function scaleUnit(n: number, unit: string, binary: boolean): Quantity | null {
  if (unit === '') return { n, base: '' };
  if (Object.hasOwn(TIME, unit)) return { n: n * TIME[unit]!, base: 's' };
  const iec = /^([kKMGTPE])i(.+)$/.exec(unit);
  if (iec !== null) return { n: n * BINARY[iec[1]!]!, base: iec[2]! };
  const p = unit.charAt(0);
  const rest = unit.slice(1);
  if (rest !== '' && (Object.hasOwn(DECIMAL, p) || (binary && Object.hasOwn(BINARY, p)))) {
    const f = binary && Object.hasOwn(BINARY, p) ? BINARY[p]! : DECIMAL[p]!;
    return { n: n * f, base: rest };
  }
  return { n, base: unit };
}

const unitConvert: FnDef = {
  name: 'unit:convert',
  params: [
    FIELD,
    { name: 'as', type: 'string', default: '(the input field)' },
    { name: 'binary', type: 'bool', default: 'false' },
    { name: 'from', type: 'string' },
    { name: 'to', type: 'string' },
    { name: 'keepUnit', type: 'bool', default: 'false' },
    { name: 'unit', type: 'string' },
  ],
  stage(a) {
    const v = argValue(a, 'field');
    const binary = a.bool('binary', false);
    const from = a.string('from') ?? a.string('unit');
    const to = a.string('to') ?? '';
    const keep = a.bool('keepUnit', false);
    const target = scaleUnit(1, to, binary);
    if (target === null) a.fail('to', `unit:convert: unknown unit ${to}`);
    const as = a.string('as') ?? fieldName(a) ?? a.fail('as', 'unit:convert: give as= when field is not a field name');
    return setter(as, (e) => {
      const text = v(e);
      if (text === undefined) return undefined;
      let q: Quantity | null;
      const plain = parseNumber(text);
      if (plain !== undefined && from !== undefined) q = scaleUnit(plain, from, binary);
      else q = readQuantity(text, binary);
      if (q === null) return undefined;
      if (to !== '' && target!.base !== '' && q.base !== '' && target!.base !== q.base) return undefined;
      const r = q.n / target!.n;
      if (!Number.isFinite(r)) return undefined;
      return keep ? `${formatNumber(r)}${to === '' ? q.base : to}` : formatNumber(r);
    });
  },
};

export const mathFunctions: FnDef[] = [...unaries, arctan2, mod, pow, spherical2cartesian, round, distance, unitConvert];
