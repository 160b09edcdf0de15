/**
 * Property: random filter/eval pipelines give the same answer on the column path (ColumnEvent over
 * a block encoded and decoded as segments store it, with lazily decoded columns and @rawstring
 * possibly rebuilt from templates) as on the per-event path (MapEvent), and on one block as on
 * many blocks whose partial aggregate states are structured-cloned and merged.
 */
import t from 'tap';
import { eventId } from '../../../src/events/event-id.js';
import { BlockView, ColumnEvent } from '../../../src/query/block-view.js';
import { compileQuery } from '../../../src/query/compile.js';
import { chainStages } from '../../../src/query/pipeline.js';
import { MapEvent, type Aggregator, type CompiledQuery, type Ev, type MapStage } from '../../../src/query/runtime.js';
import { appendEvent, emptyColumns, encodeBlockContent } from '../../../src/segments/block.js';
import { rnd } from '../../helpers/random.js';
import { ctxOf } from './driver.js';

interface Raw {
  ts: number;
  raw: string;
  fields: Record<string, string>;
  off: number;
}

const WORDS = ['GET', 'post', 'alpha', 'Beta', 'x7', 'login', 'xlogin', 'timeout', '404', '200', 'ÄÖ', 'a-b', 'star*'];
const ORIGIN = { repoName: 'r', partition: 3, tags: { type: 'kv' } };

function events(r: () => number, n: number): Raw[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  return Array.from({ length: n }, (_, i) => {
    const fields: Record<string, string> = {};
    if (r() < 0.9) fields['k'] = pick(['a', 'b', 'c']);
    if (r() < 0.8) fields['x'] = String(Math.floor(r() * 1000) - 100);
    if (r() < 0.7) fields['y'] = pick(WORDS);
    if (r() < 0.3) fields['z'] = `${pick(WORDS)} ${pick(WORDS)}`;
    // Field values inside @rawstring (templates) or not (free text must find them all the same).
    const raw = r() < 0.7 ? `${fields['y'] ?? pick(WORDS)} v=${fields['x'] ?? '-'} ${pick(WORDS)}` : `${pick(WORDS)} ${pick(WORDS)}`;
    return { ts: 1_000_000 + i * 1000, raw, fields, off: 100 + i };
  });
}

function block(evs: readonly Raw[]): BlockView {
  const c = emptyColumns();
  for (const e of evs) appendEvent(c, e.ts, 'Z', e.raw, e.fields, 5, e.off, 0);
  return BlockView.fromBody(encodeBlockContent(c).body, ORIGIN);
}

function mapEvent(e: Raw): Ev {
  return new MapEvent([
    ['@timestamp', String(e.ts)],
    ['@rawstring', e.raw],
    ['@id', eventId(ORIGIN.partition, e.off, 0, e.ts)],
    ['@timezone', 'Z'],
    ['@ingesttimestamp', '5'],
    ['#repo', 'r'],
    ['#type', 'kv'],
    ...Object.entries(e.fields),
  ]);
}

/** Partial state per group of events (one list per block), cloned and merged, then finished. */
function answer(q: CompiledQuery, groups: Ev[][]): string {
  const at = q.stages.findIndex((s) => s.kind === 'agg');
  const agg = (q.stages[at] as { agg: Aggregator<unknown> }).agg;
  const merged = agg.init();
  for (const g of groups) {
    const st = agg.init();
    const feed = chainStages(q.stages.slice(0, at) as MapStage[], (e) => agg.add(st, e));
    for (const e of g) feed(e);
    agg.merge(merged, structuredClone(st));
  }
  return JSON.stringify(agg.finish(merged).map((r) => r.names().map((n) => [n, r.get(n)])));
}

const FILTERS = [
  'k=a',
  'k!=b',
  'x>100',
  'x<=0',
  'y=*',
  'y!=*',
  'y="star*"',
  'y=*in',
  'login',
  '"ÄÖ"',
  'alpha or beta',
  'not timeout',
  '/x7|404/',
  'y=/^[a-z]+$/i',
  'z like "in"',
  'test(x > 50)',
  'in(k, values=[a, c])',
  'wildcard("*log*", field=[y, z])',
  'k=a or x>500 y=*',
];
const EVALS = ['w := x * 2', 'w := x + nosuch', 'k := upper(k)', 'v := if(x > 100, then="hi", else="lo")', 'z := concat([k, y])', 'q := x / 3 | round(q)', 'case { x > 300 | c := "big" ; k=b | c := "b" ; * }', 'y match { login => m := 1 ; /^x/ => m := 2 ; * => * }', 'text:length(y, as=n)', 'x := math:abs(x)'];
const AGGS = ['groupBy(k, function=[count(), sum(x), max(w)])', 'groupBy([k, c], function=collect([y, m]))', 'stats([count(y), avg(x), min(n)])', 'top(y, limit=3)', 'groupBy(v, function=selectFromMax(x, include=[y]))', 'count(z, distinct=true)'];

t.test('column path = per-event path, one block = many blocks', async (t) => {
  const r = rnd(2026);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  let checked = 0;
  for (let round = 0; round < 40; round++) {
    const evs = events(r, 60 + Math.floor(r() * 60));
    const whole = block(evs);
    const cuts = [0, Math.floor(evs.length / 3), Math.floor((2 * evs.length) / 3), evs.length];
    const parts = [0, 1, 2].map((i) => block(evs.slice(cuts[i], cuts[i + 1])));
    for (let k = 0; k < 6; k++) {
      const steps = [pick(FILTERS), pick(EVALS), pick(FILTERS), pick(EVALS), pick(EVALS), pick(AGGS)].filter(() => r() < 0.8);
      if (!steps.some((s) => AGGS.includes(s))) steps.push(pick(AGGS));
      const aggAt = steps.findIndex((s) => AGGS.includes(s));
      const text = steps.slice(0, aggAt + 1).join(' | ');
      const q = compileQuery(text, { ctx: ctxOf() });
      const perEvent = answer(q, [evs.map(mapEvent)]);
      const oneBlock = answer(q, [Array.from({ length: whole.n }, (_, i) => new ColumnEvent(whole, i))]);
      const manyBlocks = answer(q, parts.map((b) => Array.from({ length: b.n }, (_, i) => new ColumnEvent(b, i))));
      if (perEvent !== oneBlock) t.fail(`${text}: column path differs\nper event: ${perEvent}\ncolumns:   ${oneBlock}`);
      if (oneBlock !== manyBlocks) t.fail(`${text}: many blocks differ\none:  ${oneBlock}\nmany: ${manyBlocks}`);
      checked++;
    }
  }
  t.equal(checked, 240, `${checked} random pipelines compared`);
});
