/**
 * correlate() (query-functions.md §1 join-correlation, §2.12): finds "constellations" — one event
 * of each named subquery — whose events are linked by equal values and lie within a time window.
 *
 *   correlate(
 *     login:  { #type=auth action=login } include: [user, src],
 *     proc:   { #type=exec | host <=> login.src | user <=> login.user } include: [cmd],
 *     sequence=true, within=10m)
 *
 * Each subquery is a per-event pipeline run over the events reaching correlate(); `f <=> q.g`
 * steps inside it are links: the subquery's event must have `f` equal to `g` of `q`'s event.
 * `globalConstraints=[f]` links every subquery to the root on `f`. The events each subquery matches
 * are kept (only the fields the output and the links need), bounded by query.max_rows and the
 * query's memory budget; at the end, for each event of the root subquery (oldest first), a bounded
 * depth-first search picks one event per other subquery, in link order, checking every link,
 * `within`, and with `sequence=true` the written order of the subqueries (by @timestamp, or the
 * `sequenceBy` fields), an event may be up to `jitterTolerance` earlier than its predecessor.
 * Up to `maxPerRoot` constellations per root event; `includeMatchesOnceOnly=true` uses a non-root
 * event in at most one constellation.
 *
 * A constellation is one row: `q.f` for every subquery q and every field f of its `include:` list
 * (every field when there is none), `q.@timestamp`, the link fields when
 * `includeConstraintValues=true`, and `@timestamp` of the root event. Rows are ordered by the root
 * event's time.
 *
 * `iterationLimit` is checked (1 to 10) but does not change results: the search here is exhaustive
 * within its bounds (MAX_STEPS), where the product iterates a bounded number of passes.
 */
import type { Arg, Expr, Pipeline, Span, Stage } from '../ast.js';
import { LogsvcError } from '../../lib/errors.js';
import { chargeKept, pairsBytes } from '../memory.js';
import { parseRelative } from '../time.js';
import type { Aggregator, Ev } from '../runtime.js';
import type { BoundArgs } from './args.js';
import { compareValues, pairsKey, pairsOf, row } from './common.js';
import { readsOnly } from './correlation.js';
import type { CompileEnv, FnDef } from './types.js';

/** Named subqueries one correlate() may have. */
export const MAX_SUBQUERIES = 10;
/** Candidate checks the constellation search may make before the query fails. */
export const MAX_STEPS = 5_000_000;
/** Constellations one root event may give. */
const MAX_PER_ROOT = 1000;

interface Link {
  /** Subquery index and field on each side. */
  a: number;
  af: string;
  b: number;
  bf: string;
  span: Span;
}

interface Sub {
  name: string;
  span: Span;
  /** The subquery's filter steps (links taken out). */
  run: (e: Ev, out: Ev[]) => void;
  /** Whether the steps only read the event (no copy needed). */
  pure: boolean;
  /** Fields kept (null: every field). */
  keep: Set<string> | null;
  /** Fields shown in the output (null: every field). */
  show: Set<string> | null;
  /** Fields an event needs a value for to be of any use (its link fields). */
  needs: string[];
}

/** Per subquery, the events it matched as pairs (structured-clone safe, so partial states merge across workers). */
interface CorrState {
  ev: [string, string][][][];
  n: number;
}

function includeList(env: CompileEnv, fn: string, e: Expr): string[] {
  const items = e.k === 'array' ? e.items : [e];
  return items.map((it) => {
    if (it.k === 'ident') return it.name;
    if (it.k === 'str') return it.v;
    return env.fail(it.span, `${fn}: include: takes a field name or an array of field names`);
  });
}

function relTime(a: BoundArgs, name: string): number | undefined {
  const s = a.string(name);
  if (s === undefined) return undefined;
  const ms = parseRelative(s);
  if (ms === null) return a.fail(name, `correlate: ${name} must be a relative time such as 5m or 1h, not "${s}"`);
  return ms;
}

function compileSubs(a: BoundArgs, env: CompileEnv, subArgs: Arg[]): { subs: Sub[]; links: Link[] } {
  const names = subArgs.map((s) => s.name!);
  const links: Link[] = [];
  const subs: Sub[] = subArgs.map((arg, i) => {
    const block = arg.value as Extract<Expr, { k: 'block' }>;
    const steps: Stage[] = [];
    for (const st of block.pipeline.stages) {
      if (st.kind !== 'link') {
        steps.push(st);
        continue;
      }
      const j = names.indexOf(st.query);
      if (j < 0) env.fail(st.span, `correlate: ${st.query} is not a subquery of this correlate(); the subqueries are ${names.join(', ')}`);
      if (j === i) env.fail(st.span, `correlate: a link must name another subquery, not ${st.query} itself`);
      links.push({ a: i, af: st.field, b: j, bf: st.other, span: st.span });
    }
    let run: Sub['run'] = (e, out) => void out.push(e);
    let pure = true;
    if (steps.length > 0) {
      const p: Pipeline = { stages: steps, span: block.pipeline.span };
      run = env.subStages(p);
      pure = steps.every((st) => st.kind === 'expr' && readsOnly(st.expr));
    }
    const inc = arg.subquery?.include ?? null;
    const show = inc === null ? null : new Set(includeList(env, 'correlate', inc));
    return { name: names[i]!, span: arg.span, run, pure, keep: show === null ? null : new Set(show), show, needs: [] };
  });
  return { subs, links };
}

const correlate: FnDef = {
  name: 'correlate',
  namedSubqueries: true,
  params: [
    { name: 'within', type: 'string', default: '(the query time range)' },
    { name: 'sequence', type: 'bool', default: 'false' },
    { name: 'sequenceBy', type: 'fields', default: '@timestamp' },
    { name: 'root', type: 'string', default: '(the first subquery)' },
    { name: 'globalConstraints', type: 'fields', default: '(none)' },
    { name: 'includeConstraintValues', type: 'bool', default: 'true' },
    { name: 'includeMatchesOnceOnly', type: 'bool', default: 'false' },
    { name: 'maxPerRoot', type: 'number', default: '1' },
    { name: 'jitterTolerance', type: 'string', default: '0s' },
    { name: 'iterationLimit', type: 'number', default: '5' },
  ],
  agg(a, env) {
    if (env.where !== 'top') a.env.fail(a.call.span, 'correlate() cannot be used inside other functions, case or match: use it as a step of the query');
    if (env.priorAggregate) a.env.fail(a.call.span, 'correlate() cannot follow an aggregate function: its subqueries read events');
    const subArgs = a.call.args.filter((x) => x.subquery !== undefined);
    if (subArgs.length < 2) a.env.fail(a.call.span, 'correlate() needs at least two named subqueries, written name: { filters } include: [fields]');
    if (subArgs.length > MAX_SUBQUERIES) a.env.fail(subArgs[MAX_SUBQUERIES]!.span, `correlate() takes at most ${MAX_SUBQUERIES} named subqueries`);
    const seen = new Set<string>();
    for (const s of subArgs) {
      if (seen.has(s.name!)) a.env.fail(s.span, `correlate: the subquery name ${s.name} is used twice`);
      if (a.def.params.some((p) => p.name.toLowerCase() === s.name!.toLowerCase())) a.env.fail(s.span, `correlate: ${s.name} is a parameter of correlate(); name the subquery otherwise`);
      seen.add(s.name!);
    }
    const { subs, links } = compileSubs(a, env, subArgs);
    const names = subs.map((s) => s.name);

    const rootName = a.string('root') ?? names[0]!;
    const root = names.indexOf(rootName);
    if (root < 0) a.fail('root', `correlate: root ${rootName} is not one of the subqueries (${names.join(', ')})`);
    for (const f of a.list('globalConstraints') ?? []) {
      for (let i = 0; i < subs.length; i++) if (i !== root) links.push({ a: i, af: f, b: root, bf: f, span: a.span('globalConstraints') });
    }
    const within = relTime(a, 'within');
    if (within !== undefined) {
      if (within <= 0) a.fail('within', 'correlate: within must be longer than 0');
      const range = env.ctx.end - env.ctx.start;
      if (Number.isFinite(range) && range > 0 && within > range + 1) a.fail('within', `correlate: within (${a.string('within')}) is longer than the query's time range`);
    }
    const jitter = relTime(a, 'jitterTolerance') ?? 0;
    if (within !== undefined && jitter > within) a.fail('jitterTolerance', 'correlate: jitterTolerance must not be longer than within');
    const iterations = a.number('iterationLimit', 5);
    if (!Number.isInteger(iterations) || iterations < 1 || iterations > 10) a.fail('iterationLimit', 'correlate: iterationLimit must be a whole number from 1 to 10');
    const maxPerRoot = a.number('maxPerRoot', 1);
    if (!Number.isInteger(maxPerRoot) || maxPerRoot < 1 || maxPerRoot > MAX_PER_ROOT) a.fail('maxPerRoot', `correlate: maxPerRoot must be a whole number from 1 to ${MAX_PER_ROOT}`);
    const sequence = a.bool('sequence', false);
    const sequenceBy = a.list('sequenceBy') ?? ['@timestamp'];
    const byTimestamp = sequenceBy.length === 1 && sequenceBy[0] === '@timestamp';
    const constraintValues = a.bool('includeConstraintValues', true);
    const onceOnly = a.bool('includeMatchesOnceOnly', false);

    // Every subquery must be reachable from the root through links: the search order.
    const order: number[] = [root];
    const anchor: (Link | null)[] = subs.map(() => null);
    while (order.length < subs.length) {
      let grown = false;
      for (const l of links) {
        const inA = order.includes(l.a);
        const inB = order.includes(l.b);
        if (inA === inB) continue;
        const next = inA ? l.b : l.a;
        // The anchor links `next` (side a) to a subquery already placed (side b).
        anchor[next] = inA ? { a: l.b, af: l.bf, b: l.a, bf: l.af, span: l.span } : l;
        order.push(next);
        grown = true;
      }
      if (!grown) {
        const lone = subs.find((_, i) => !order.includes(i))!;
        a.env.fail(lone.span, `correlate: subquery ${lone.name} is not linked to ${rootName}; add a step such as "| field <=> ${rootName}.field" to it, or globalConstraints=[field]`);
      }
    }
    const position = subs.map((_, i) => order.indexOf(i));
    // What each subquery's events must carry: link fields, sequence fields, the timestamp.
    for (const l of links) {
      subs[l.a]!.needs.push(l.af);
      subs[l.b]!.needs.push(l.bf);
    }
    for (const s of subs) {
      s.needs = [...new Set(s.needs)];
      if (s.keep !== null) {
        for (const f of [...s.needs, '@timestamp', ...sequenceBy]) s.keep.add(f);
        if (constraintValues) for (const f of s.needs) s.show!.add(f);
        s.show!.add('@timestamp');
      }
    }
    const maxEvents = env.limits.maxRows;
    const over = (what: string): never => {
      throw new LogsvcError('E_QUERY', `correlate: ${what}; narrow the subqueries with more filters or search a shorter time range`);
    };

    const agg: Aggregator<CorrState> = {
      name: 'correlate',
      init: () => ({ ev: subs.map(() => []), n: 0 }),
      add(st, e) {
        for (let i = 0; i < subs.length; i++) {
          const s = subs[i]!;
          const out: Ev[] = [];
          s.run(s.pure ? e : e.clone(), out);
          for (const m of out) {
            if (s.needs.some((f) => m.get(f) === undefined)) continue;
            const p = s.keep === null ? pairsOf(m) : pairsOf(m).filter(([k]) => s.keep!.has(k));
            if (++st.n > maxEvents) over(`its subqueries matched more than ${maxEvents} events to keep (query.max_rows)`);
            chargeKept(pairsBytes(p));
            st.ev[i]!.push(p);
          }
        }
      },
      merge(into, o) {
        into.n += o.n;
        if (into.n > maxEvents) over(`its subqueries matched more than ${maxEvents} events to keep (query.max_rows)`);
        for (let i = 0; i < subs.length; i++) for (const p of o.ev[i]!) into.ev[i]!.push(p);
      },
      finish(st) {
        const evs = st.ev.map((list) => list.map((p) => ({ p, m: new Map(p), key: pairsKey(p) })));
        const ts = (x: { m: Map<string, string> }): number => Number(x.m.get('@timestamp'));
        for (const list of evs) list.sort((x, y) => (ts(x) || 0) - (ts(y) || 0) || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
        // Per non-root subquery, its events by the value of its anchor field.
        const index = evs.map((list, i) => {
          const idx = new Map<string, number[]>();
          const l = anchor[i];
          if (l === null || l === undefined) return idx;
          list.forEach((x, k) => {
            const v = x.m.get(l.af)!;
            const at = idx.get(v);
            if (at === undefined) idx.set(v, [k]);
            else at.push(k);
          });
          return idx;
        });
        // The links each subquery must check against those placed before it in the search order.
        const checks = subs.map((_, i) => links.filter((l) => (l.a === i && position[l.b]! < position[i]!) || (l.b === i && position[l.a]! < position[i]!)));
        const used = evs.map((list) => new Uint8Array(list.length));
        const chosen: number[] = subs.map(() => -1);
        const out: Ev[] = [];
        let steps = 0;
        const seqBefore = (x: Map<string, string>, y: Map<string, string>): boolean => {
          // x (earlier subquery) may not come after y, except by jitterTolerance on @timestamp.
          if (byTimestamp) return Number(x.get('@timestamp')) <= Number(y.get('@timestamp')) + jitter;
          for (const f of sequenceBy) {
            const a1 = x.get(f);
            const b1 = y.get(f);
            if (a1 === undefined || b1 === undefined) return false;
            const c = compareValues(a1, b1);
            if (c !== 0) return c < 0;
          }
          return true;
        };
        const fits = (i: number, x: { m: Map<string, string> }): boolean => {
          for (const l of checks[i]!) {
            const other = l.a === i ? l.b : l.a;
            const mine = l.a === i ? l.af : l.bf;
            const theirs = l.a === i ? l.bf : l.af;
            if (x.m.get(mine) !== evs[other]![chosen[other]!]!.m.get(theirs)) return false;
          }
          if (within !== undefined || sequence) {
            const t = ts(x);
            for (let k = 0; k < position[i]!; k++) {
              const j = order[k]!;
              const y = evs[j]![chosen[j]!]!;
              if (within !== undefined && !(Math.abs(t - ts(y)) <= within)) return false;
              if (sequence && !(j < i ? seqBefore(y.m, x.m) : seqBefore(x.m, y.m))) return false;
            }
          }
          return true;
        };
        const emit = (): void => {
          const pairs: [string, string][] = [];
          const t0 = evs[root]![chosen[root]!]!.m.get('@timestamp');
          if (t0 !== undefined) pairs.push(['@timestamp', t0]);
          subs.forEach((s, i) => {
            for (const [k, v] of evs[i]![chosen[i]!]!.p) if (s.show === null || s.show.has(k)) pairs.push([`${s.name}.${k}`, v]);
          });
          out.push(row(pairs));
          if (out.length > maxEvents) over(`more than ${maxEvents} constellations (query.max_rows)`);
          if (onceOnly) for (let i = 0; i < subs.length; i++) if (i !== root) used[i]![chosen[i]!] = 1;
        };
        /** Places subqueries from search position k on; returns how many constellations it emitted. */
        const search = (k: number, budget: number): number => {
          if (k === order.length) {
            emit();
            return 1;
          }
          const i = order[k]!;
          const l = anchor[i]!;
          const cands = index[i]!.get(evs[l.b]![chosen[l.b]!]!.m.get(l.bf)!) ?? [];
          let found = 0;
          for (const c of cands) {
            // With includeMatchesOnceOnly, a path whose events were just used stops.
            if (onceOnly && found > 0 && order.slice(1, k).some((j) => used[j]![chosen[j]!] === 1)) break;
            if (++steps > MAX_STEPS) over(`the search for constellations passed ${MAX_STEPS} candidate checks`);
            if (used[i]![c] === 1) continue;
            const x = evs[i]![c]!;
            if (!fits(i, x)) continue;
            chosen[i] = c;
            found += search(k + 1, budget - found);
            chosen[i] = -1;
            if (found >= budget) break;
          }
          return found;
        };
        for (let r = 0; r < evs[root]!.length; r++) {
          chosen[root] = r;
          search(1, maxPerRoot);
        }
        return out;
      },
    };
    return { agg, outputs: null, oneRow: false };
  },
};

export const correlateFunctions: FnDef[] = [correlate];
