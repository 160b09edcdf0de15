/**
 * Filters and event functions (query-functions.md §1): wildcard, sample, dropEvent, copyEvent
 * (parsers only), eventFieldCount, eventSize, eventInternals, beta:param.
 */
import { parseEventId } from '../../events/event-id.js';
import type { Filter } from '../ast.js';
import { searchedValues } from '../filter.js';
import { markDropped, type Ev } from '../runtime.js';
import { compileWildcard } from '../wildcard.js';
import { murmur3 } from './crypto.js';
import { valueDef } from './define.js';
import type { FnDef } from './types.js';

/**
 * wildcard(pattern, field=[...]): with fields, an anchored glob on any of them (`f =~
 * wildcard("x*")`); without, an unanchored glob over the event as free text sees it. pattern="*"
 * keeps only events that have the field unless includeEverythingOnAsterisk=true.
 */
const wildcard: FnDef = {
  name: 'wildcard',
  params: [
    { name: 'pattern', type: 'string', unnamed: true, required: true },
    { name: 'field', type: 'fields' },
    { name: 'ignoreCase', type: 'bool', default: 'false' },
    { name: 'includeEverythingOnAsterisk', type: 'bool', default: 'false' },
  ],
  filter(a) {
    const pattern = a.string('pattern')!;
    const ignoreCase = a.bool('ignoreCase', false);
    const fields = a.list('field');
    const all = /^\*+$/.test(pattern);
    if (fields === undefined || fields.length === 0) {
      if (all) return () => true;
      const test = compileWildcard(pattern, { anchored: false, ignoreCase });
      return (e) => {
        const raw = e.get('@rawstring');
        return (raw !== undefined && test(raw)) || searchedValues(e, test);
      };
    }
    if (all) {
      if (a.bool('includeEverythingOnAsterisk', false)) return () => true;
      return (e) => fields.some((f) => e.has(f));
    }
    const test = compileWildcard(pattern, { anchored: true, ignoreCase });
    if (fields.length === 1) {
      // One field (the usual call): no closure per event.
      const f = fields[0]!;
      return (e) => {
        const v = e.get(f);
        return v !== undefined && test(v);
      };
    }
    return (e) =>
      fields.some((f) => {
        const v = e.get(f);
        return v !== undefined && test(v);
      });
  },
  filterSyntax(a) {
    // With fields and case-sensitive, wildcard() is `f1="pattern" or f2="pattern"`: an anchored glob,
    // `*` a wildcard quoted or not (filter.ts equalityTest), so the scan's column path takes it too.
    const pattern = a.string('pattern')!;
    const fields = a.list('field');
    if (fields === undefined || fields.length === 0 || a.bool('ignoreCase', false) || /^\*+$/.test(pattern)) return null;
    const span = a.call.span;
    return fields
      .map((field): Filter => ({ k: 'compare', field, op: '=', value: { k: 'str', v: pattern, quoted: true, span }, span }))
      .reduce((left, right) => ({ k: 'or', left, right, span }));
  },
};

/** sample(percentage): keeps about that share of events, chosen by a hash of the field (default @timestamp). */
const sample: FnDef = {
  name: 'sample',
  params: [
    { name: 'percentage', type: 'number', unnamed: true, default: '1' },
    { name: 'field', type: 'field', default: '@timestamp' },
  ],
  stage(a) {
    const pct = a.number('percentage', 1);
    if (!(pct > 0 && pct <= 100)) a.fail('percentage', 'sample: percentage must be above 0 and at most 100');
    const field = a.string('field', '@timestamp');
    const threshold = Math.round((pct / 100) * 0x1_0000_0000);
    // A stage, not a filter: sample() cannot be negated (query-functions.md §2.6).
    return {
      pure: true,
      run(e, emit) {
        const v = e.get(field);
        if (v !== undefined && murmur3(v, 0x5a17) < threshold) emit(e);
      },
    };
  },
};

/** Discards the event; inside case/match the event is gone, the next branches are not tried. */
const dropEvent: FnDef = {
  name: 'dropEvent',
  params: [],
  stage: () => ({
    pure: true,
    run(e) {
      markDropped(e);
    },
  }),
};

const copyEvent: FnDef = {
  name: 'copyEvent',
  parserOnly: true,
  params: [{ name: 'type', type: 'string', unnamed: true, required: true }],
  stage(a) {
    const type = a.string('type')!;
    return {
      run(e, emit) {
        const c = e.clone();
        c.set('#type', type);
        emit(e);
        emit(c);
      },
    };
  },
};

function stored(e: Ev): [string, string][] {
  const s = (e as { storedFields?: () => Iterable<[string, string]> }).storedFields;
  if (s !== undefined) return [...s.call(e)];
  const out: [string, string][] = [];
  for (const n of e.names()) {
    const v = e.get(n);
    if (v !== undefined) out.push([n, v]);
  }
  return out;
}

const BUILT_IN = ['@timestamp', '@rawstring', '@timezone', '@ingesttimestamp'];

/** Fields the event stores: @timestamp, @rawstring, @timezone, @ingesttimestamp and its own fields (tags not counted). */
const eventFieldCount = valueDef('eventFieldCount', [], '_eventFieldCount', () => (e) => {
  let n = BUILT_IN.filter((b) => e.get(b) !== undefined).length;
  for (const [name] of stored(e)) if (!name.startsWith('#') && !name.startsWith('@')) n++;
  return String(n);
});

/** UTF-8 bytes of the stored values (names excluded). */
const eventSize = valueDef('eventSize', [], '_eventSize', () => (e) => {
  let n = 0;
  for (const b of BUILT_IN) {
    const v = e.get(b);
    if (v !== undefined) n += Buffer.byteLength(v, 'utf8');
  }
  for (const [name, v] of stored(e)) if (!name.startsWith('#') && !name.startsWith('@')) n += Buffer.byteLength(v, 'utf8');
  return String(n);
});

/** eventInternals(prefix=@): where the event is stored — its digest partition, record offset and index. */
const eventInternals: FnDef = {
  name: 'eventInternals',
  params: [{ name: 'prefix', type: 'string', default: '@' }],
  stage(a) {
    const prefix = a.string('prefix', '@');
    return {
      run(e, emit) {
        const id = e.get('@id');
        const p = id === undefined ? null : parseEventId(id);
        if (p !== null) {
          e.set(`${prefix}partition`, String(p.partition));
          e.set(`${prefix}offset`, String(p.offset));
          e.set(`${prefix}index`, String(p.index));
        }
        emit(e);
      },
    };
  },
};

/** beta:param(parameter, as): the query parameter's value (params.ts puts it in place of the name) into a field. */
const betaParam: FnDef = {
  name: 'beta:param',
  params: [
    { name: 'parameter', type: 'string', unnamed: true, required: true },
    { name: 'as', type: 'string', required: true },
  ],
  stage(a) {
    const v = a.string('parameter')!;
    const as = a.string('as')!;
    return {
      run(e, emit) {
        e.set(as, v);
        emit(e);
      },
    };
  },
};

/**
 * beta:repeating(interval): marks a static query to be re-run like a live one, for dashboards. This
 * node has no repeating queries; as in the product's static searches, it has no effect.
 */
const betaRepeating: FnDef = {
  name: 'beta:repeating',
  params: [
    { name: 'interval', type: 'string', unnamed: true },
    { name: 'as', type: 'string' },
  ],
  stage: () => ({ pure: true, run: (e, emit) => emit(e) }),
};

export const miscFunctions: FnDef[] = [wildcard, sample, dropEvent, copyEvent, eventFieldCount, eventSize, eventInternals, betaParam, betaRepeating];
