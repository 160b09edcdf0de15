/**
 * Property: random filter/eval pipelines give the same answer on the column path (ColumnEvent over
 * a block encoded and decoded as segments store it, with lazily decoded columns and @rawstring
 * possibly rebuilt from templates) as on the per-event path (MapEvent), and on one block as on
 * many blocks whose partial aggregate states are structured-cloned and merged. And: a scan's column
 * path (columnar.ts: filters on columns into a selection vector, column aggregates, answers from
 * block metadata) gives the same answer as its per-event path and as MapEvents one by one.
 */
import t from 'tap';
import type { Test } from 'tap';
import { eventId } from '../../../src/events/event-id.js';
import { BlockView, ColumnEvent } from '../../../src/query/block-view.js';
import { compileQuery } from '../../../src/query/compile.js';
import { Meter, withMeter } from '../../../src/query/memory.js';
import { blockScanner, splitAtAggregate } from '../../../src/query/scan.js';
import { chainStages } from '../../../src/query/pipeline.js';
import { MapEvent, type Aggregator, type CompiledQuery, type Ev, type MapStage } from '../../../src/query/runtime.js';
import { appendEvent, assembleBlock, assembleBlockV4, assembleBlockV5, blockDirectory, emptyColumns, encodeBlockContent, encodedBlockAt, readBlockMeta } from '../../../src/segments/block.js';
import type { SummarisedColumn } from '../../../src/query/columnar.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { encodeFooter, encodeSegmentHeader, summarize, type BlockEntry } from '../../../src/segments/segment-file.js';
import { runScanTask, type BlockRef } from '../../../src/query/scan.js';
import { DEFAULT_LIMITS } from '../../../src/query/runtime.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/** The bytes of a block of these events: segment format 6 (column frames and summaries), 5 (column frames) or 4 (one LZ4 body). */
function blockBytes(evs: readonly Raw[], format: 4 | 5 | 6): Buffer {
  const c = emptyColumns();
  for (const e of evs) appendEvent(c, e.ts, 'Z', e.raw, e.fields, 5, e.off, 0);
  const content = encodeBlockContent(c);
  return format === 6 ? assembleBlock(content, lz4Codec) : format === 5 ? assembleBlockV5(content, lz4Codec) : assembleBlockV4(content, lz4Codec);
}

/** A view of the events as a segment block (format 6 unless told), its columns decoded as the reads ask for them. */
function block(evs: readonly Raw[], format: 4 | 5 | 6 = 6): BlockView {
  return blockWithHead(evs, format).view;
}

/** A block's view and (formats 5 and 6) its head's columns with their summaries. */
function blockWithHead(evs: readonly Raw[], format: 4 | 5 | 6): { view: BlockView; columns: SummarisedColumn[] | null } {
  const bytes = blockBytes(evs, format);
  const m = readBlockMeta(bytes, 0)!;
  const columns = m.framed === true ? blockDirectory(bytes.subarray(0, m.headerLength), m)!.columns : null;
  return { view: BlockView.fromEncoded(encodedBlockAt(bytes, 0, m, lz4Codec), ORIGIN), columns };
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
const EVALS = ['w := x * 2', 'w := x + nosuch', 'k := upper(k)', 'v := if(x > 100, then="hi", else="lo")', 'z := concat([k, y])', 'q := x / 3 | round(q)', 'case { x > 300 | c := "big" ; k=b | c := "b" ; * }', 'y match { login => m := 1 ; /^x/ => m := 2 ; * => * }', 'text:length(y, as=n)', 'x := math:abs(x)', 'select([k, x, y, @timestamp])', 'w := x * 2 | select([k, w, z])'];
const AGGS = ['groupBy(k, function=[count(), sum(x), max(w)])', 'groupBy([k, c], function=collect([y, m]))', 'stats([count(y), avg(x), min(n)])', 'top(y, limit=3)', 'groupBy(v, function=selectFromMax(x, include=[y]))', 'count(z, distinct=true)'];

t.test('column path = per-event path, one block = many blocks', async (t) => {
  const r = rnd(Number(process.env.PROPERTY_SEED ?? 2026));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  let checked = 0;
  for (let round = 0; round < 40; round++) {
    const evs = events(r, 60 + Math.floor(r() * 60));
    const whole = block(evs);
    const cuts = [0, Math.floor(evs.length / 3), Math.floor((2 * evs.length) / 3), evs.length];
    // Blocks of both formats (a query reads segments written before and after format 5).
    const parts = [0, 1, 2].map((i) => block(evs.slice(cuts[i], cuts[i + 1]), ([6, 4, 5] as const)[i]));
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

// --- the column path of a scan (columnar.ts, issue 19) ----------------------------------------------

/** Events with columns of every encoding: dictionary (k, y), integers (n, always there), text (u), references and templates. */
function scanEvents(r: () => number, n: number, t0: number, step: number): Raw[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const dense = r() < 0.5;
  return Array.from({ length: n }, (_, i) => {
    const fields: Record<string, string> = {};
    if (r() < 0.9) fields['k'] = pick(['a', 'b', 'c']);
    if (r() < 0.8) fields['x'] = String(Math.floor(r() * 1000) - 100);
    fields['n'] = String(Math.floor(r() * 500) - 50);
    fields['ip'] = `10.${Math.floor(r() * 3)}.0.${Math.floor(r() * 256)}`;
    // Five values, so the best one ties across rows and blocks (selectFromMax/Min break ties by content).
    fields['t'] = String((i * 7) % 5);
    if (r() < 0.7) fields['y'] = pick(WORDS);
    // Distinct values (no dictionary): a text or reference column.
    if (r() < (dense ? 0.95 : 0.5)) fields['u'] = `${pick(WORDS)}-${Math.floor(r() * 100000)}`;
    // Some values glued to words (a template cut inside a token run: free text must still find words across it).
    const form = r();
    const raw =
      form < 0.5
        ? `${fields['y'] ?? pick(WORDS)} v=${fields['x'] ?? '-'} ${fields['u'] ?? pick(WORDS)}`
        : form < 0.8
          ? `k${fields['n']}z ${fields['y'] ?? ''}x ${fields['k'] ?? ''}${fields['ip']}`
          : `${pick(WORDS)} ${pick(WORDS)}`;
    return { ts: t0 + i * step, raw, fields, off: 100 + i };
  });
}

const SCAN_FILTERS = [
  'k=a',
  'k!=b',
  'k=*',
  'y!=*',
  'y=*in',
  'y=/^[a-z]+$/i',
  'x>100',
  'x<=0',
  'n>=200',
  'n<0',
  'n=42',
  'n!=7',
  'u=*9*',
  'u like "login"',
  'login',
  '"ÄÖ"',
  'x7*',
  'alpha or beta',
  'not timeout',
  '/x7|404/',
  'k1',
  '5z',
  'loginx',
  'ginx',
  'gina',
  'alphax',
  'z GET',
  '404',
  '12',
  '7',
  '255',
  'a10',
  'k=a or n>300 y=*',
  'n>2.5',
  'n<=-3.5',
  'n<100.5 n>=99.5',
  'not (k=c and x<50)',
  '#type=kv',
  '@rawstring=*-1*',
  '@timestamp>1001000000',
  'in(k, values=[a, c])',
  // No row of any block: column summaries leave such blocks out.
  'k=zz',
  'n>5000',
];
const SCAN_REST = ['w := x * 2', 'k := upper(k)', 'y=*', 'replace("\\\\d", with="#", field=u)', 'replace("[ab]", with="<$0>", field=k)'];
const SCAN_AGGS = [
  'count()',
  'count(x)',
  'count(u)',
  'count(#type)',
  'groupBy(k)',
  'groupBy(y, limit=2)',
  'groupBy(u)',
  'groupBy(n, function=count(as=c))',
  'top(ip, limit=4)',
  'groupBy(ip)',
  'top(n)',
  'count(u, distinct=true)',
  'count(k, distinct=true)',
  'count(ip, distinct=true)',
  // x: a text column of integers' texts, absent from some rows (tallied by number).
  'count(x, distinct=true)',
  'groupBy(x, limit=5)',
  'top(x, limit=3)',
  'top(y)',
  'top(u, limit=3)',
  'top(k, sum=n)',
  'timechart(span=7s)',
  'timechart(span=1m)',
  'bucket(span=3s)',
  'timechart(span=1h)',
  'bucket(span=30m)',
  'timechart(span=20s, limit=3)',
  'timechart(k, span=10s)',
  'groupBy(k, function=sum(n))',
  'avg(n)',
  'sum(x)',
  'stdDev(n)',
  'max(u)',
  'min(ip)',
  'range(x)',
  'tail(5)',
  'percentile(n, percentiles=[50, 99])',
  'percentile(x)',
  'percentile(k, as=p)',
  'percentile(ip)',
];
/** Function calls that offer the scan a column path (FnDef.filterSyntax, selectFromMax/Min's columns). */
const SCAN_FUNCTION_FILTERS = ['wildcard("*9*", field=u)', 'wildcard("*in", field=[y, k])', 'wildcard("a", field=k)', '!wildcard("*in", field=y)', 'k=a', 'x>100', 'login'];
const SCAN_FUNCTION_AGGS = ['selectFromMax(n, include=[u, k])', 'selectFromMin(x, include=[y])', 'selectFromMax(u, include=[ip])', 'selectFromMin(ip, include=[k])', 'selectFromMax(x, include=[k])', 'selectFromMax(t, include=[u, y])', 'selectFromMin(t, include=[y, k])', 'count()'];

/** Rows as text, each row's fields by name (a block row and a MapEvent list their names in different orders). */
function sortedRows(rows: readonly Ev[]): string {
  return JSON.stringify(rows.map((x) => x.names().sort().map((n) => [n, x.get(n)])));
}

/**
 * Random scans of `filters` then one of `aggs`, each by the column path, the per-event path, block
 * metadata with (format 6) column summaries, and MapEvents; how many blocks metadata and summaries answered.
 */
function compareScans(t: Test, seed: number, filters: readonly string[], aggs: readonly string[]): { viaMeta: number; summarised: number; summarySkipped: number } {
  const r = rnd(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const T0 = 1_000_000_000;
  let checked = 0;
  let viaMeta = 0;
  let summarised = 0;
  let summarySkipped = 0;
  for (let round = 0; round < 30; round++) {
    // Blocks of random sizes and time steps; the query range cuts some of them.
    const blocks: Raw[][] = [];
    let t0 = T0;
    for (let b = 0; b < 1 + Math.floor(r() * 4); b++) {
      const step = pick([10, 100, 1000, 5000]);
      const evs = scanEvents(r, 30 + Math.floor(r() * 150), t0, step);
      blocks.push(evs);
      t0 = evs[evs.length - 1]!.ts + pick([1, 50, 20_000]);
    }
    const all = blocks.flat();
    const lo = all[0]!.ts;
    const hi = all[all.length - 1]!.ts;
    const cut = r() < 0.5;
    const start = cut ? lo + Math.floor(r() * (hi - lo) * 0.4) : lo - 60_000;
    const end = cut ? hi - Math.floor(r() * (hi - lo) * 0.4) : hi + 60_000;
    const heads = blocks.map((evs, b) => blockWithHead(evs, ([6, 4, 5] as const)[(round + b) % 3]!));
    for (let k = 0; k < 8; k++) {
      const steps = [pick(filters), pick(filters), pick(SCAN_REST)].filter((_, i) => r() < (i === 2 ? 0.2 : 0.6));
      const text = [...steps, pick(aggs)].join(' | ');
      const q = compileQuery(text, { ctx: ctxOf({ start, end }) });
      const { maps, agg } = splitAtAggregate(q);
      // oneTask: every block into one state, as one scan task reads its blocks; else a state per block, merged.
      const run = (columnPath: boolean, useMeta: boolean, oneTask = false): { answer: string; matched: number; events: number; meta: number } => {
        const merged = agg.init();
        let matched = 0;
        let events = 0;
        let meta = 0;
        let unread = 0;
        const task = { state: agg.init(), events: 0, bytes: 0, blocksRead: 0, blocksSkipped: 0, matched: 0, warnings: [] };
        blocks.forEach((evs, b) => {
          const result = oneTask ? task : { state: agg.init(), events: 0, bytes: 0, blocksRead: 0, blocksSkipped: 0, matched: 0, warnings: [] };
          const scanner = blockScanner(maps, agg, result, { start, end, columnPath, meter: new Meter(null), overTime: () => undefined });
          const minTs = evs[0]!.ts;
          const maxTs = evs[evs.length - 1]!.ts;
          const whole = minTs >= start && maxTs <= end;
          const { view, columns } = heads[b]!;
          // With metadata: the header (count, one bucket), then (format 6) the column summaries, then the rows.
          if (useMeta && scanner.meta(minTs, maxTs, evs.length)) meta++;
          else if (useMeta && columns !== null && scanner.summary(columns, evs.length, whole)) summarised++;
          // The summaries say no row passes the filters: the block is left out, as a scan leaves it.
          else if (useMeta && columns !== null && scanner.summaryVerdict(columns, evs.length) === 'none') {
            // Not read, so its events are not counted as read (as a block its bloom filter rules out).
            summarySkipped++;
            unread += evs.filter((e) => e.ts >= start && e.ts <= end).length;
          }
          else scanner.view(view, whole);
          // The end of a scan task: what the column path held back reaches the state (a task of its own per block, or the last block of one task).
          if (oneTask && b < blocks.length - 1) return;
          scanner.flush();
          if (oneTask) return;
          agg.merge(merged, structuredClone(result.state));
          matched += result.matched;
          events += result.events;
        });
        if (oneTask) return { answer: sortedRows(agg.finish(task.state)), matched: task.matched, events: task.events + unread, meta };
        return { answer: sortedRows(agg.finish(merged)), matched, events: events + unread, meta };
      };
      // The oracle: MapEvents in range, one state per block, through the stages one by one.
      const oracle = sortedRows(JSON.parse(answer(q, blocks.map((evs) => evs.filter((e) => e.ts >= start && e.ts <= end).map(mapEvent)))).map((pairs: [string, string][]) => new MapEvent(pairs)));
      const perEvent = run(false, false);
      const columns = run(true, false);
      const withMeta = run(true, true);
      viaMeta += withMeta.meta;
      if (perEvent.answer !== oracle) t.fail(`${text}: ColumnEvent path differs from MapEvents\nmap events: ${oracle}\ncolumn ev.: ${perEvent.answer}`);
      if (columns.answer !== perEvent.answer) t.fail(`${text} [${start}, ${end}]: column path differs\nper event: ${perEvent.answer}\ncolumns:   ${columns.answer}`);
      if (withMeta.answer !== perEvent.answer) t.fail(`${text} [${start}, ${end}]: block metadata differs\nper event: ${perEvent.answer}\nmetadata:  ${withMeta.answer}`);
      if (columns.matched !== perEvent.matched || withMeta.matched !== perEvent.matched) t.fail(`${text}: matched ${perEvent.matched} per event, ${columns.matched} columns, ${withMeta.matched} metadata`);
      if (columns.events !== perEvent.events || withMeta.events !== perEvent.events) t.fail(`${text}: events ${perEvent.events} per event, ${columns.events} columns, ${withMeta.events} metadata`);
      // One state through every block (a limited groupBy may differ from merged states; both paths must not).
      const taskPerEvent = run(false, false, true);
      const taskColumns = run(true, false, true);
      if (taskColumns.answer !== taskPerEvent.answer) t.fail(`${text} [${start}, ${end}]: one task's column path differs\nper event: ${taskPerEvent.answer}\ncolumns:   ${taskColumns.answer}`);
      const taskWithMeta = run(true, true, true);
      if (taskWithMeta.answer !== taskPerEvent.answer) t.fail(`${text} [${start}, ${end}]: one task's metadata and summaries differ\nper event: ${taskPerEvent.answer}\nmetadata:  ${taskWithMeta.answer}`);
      checked++;
    }
  }
  t.equal(checked, 240, `${checked} random scans compared`);
  return { viaMeta, summarised, summarySkipped };
}

t.test('scan: column path = per-event path (filters, selection vectors, column aggregates, block metadata)', async (t) => {
  const { viaMeta, summarised, summarySkipped } = compareScans(t, 19, SCAN_FILTERS, SCAN_AGGS);
  t.ok(viaMeta > 0, `${viaMeta} blocks answered from their metadata`);
  t.ok(summarised > 0, `${summarised} blocks answered from their column summaries`);
  t.ok(summarySkipped > 0, `${summarySkipped} blocks left out because their column summaries say no row passes`);
});

t.test('scan: answers from column summaries (format 6) = the rows read = per event', async (t) => {
  const r = rnd(66);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const filters = ['', 'k=a', 'k!=b', 'k=*', 'k!=*', 'y=*in', 'y!=login', 'k=a | k!=b', 'n>=-50', 'n<-50', 'n>1000', 'n<=449', 'n>100', 'nosuch=x', 'nosuch!=x', 'x>100', 'x>=-100', 'x<-100', 'x<=899 x>-101', 'n>=0 n<200.5', 'n<=99 | n>-7', 'n>100 n<=100', 'n>2.5'];
  const aggs = ['count()', 'groupBy(k)', 'groupBy(y)', 'top(y)', 'top(k, limit=2)', 'count(y, distinct=true)', 'count(k, distinct=true)', 'sum(n)', 'avg(n)', 'min(n)', 'max(n)', 'range(n)', 'stdDev(n)', 'sum(x)', 'avg(x)', 'min(x)', 'max(x)', 'count(x)', 'timechart(span=1m)', 'timechart(span=5m)', 'bucket(span=1h)', 'timechart(span=30s)', 'timechart(span=1d, timezone="+05:30")', 'groupBy(nosuch)', 'top(ip)', 'worldMap(lat=n, lon=x, precision=2)', 'worldMap(lat=n, lon=x, magnitude=collect(_geohash))'];
  let checked = 0;
  let summarised = 0;
  let summarySkipped = 0;
  let textInts = 0;
  let byOrder = 0;
  for (let round = 0; round < 16; round++) {
    const blocks: Raw[][] = [];
    let t0 = 1_700_000_000_000 + Math.floor(r() * 3_600_000);
    for (let b = 0; b < 3; b++) {
      const evs = scanEvents(r, 100 + Math.floor(r() * 300), t0, pick([100, 1000, 5000, 20_000]));
      blocks.push(evs);
      t0 = evs[evs.length - 1]!.ts + pick([1, 70_000]);
    }
    const heads = blocks.map((evs) => blockWithHead(evs, 6));
    // A block's integer columns in order, as a query thread keeps them decoded (kept-ints.ts).
    const sortedOf = (b: number) => (name: string): Int32Array | undefined => {
      const view = heads[b]!.view;
      const ints = view.encoding(name) === 'i' ? view.ints(name) : null;
      return ints === null || ints.some((x) => (x | 0) !== x) ? undefined : Int32Array.from(ints).sort();
    };
    const all = blocks.flat();
    const ctx = ctxOf({ start: all[0]!.ts - 86_400_000, end: all[all.length - 1]!.ts + 86_400_000 });
    for (let k = 0; k < 20; k++) {
      const f = pick(filters);
      const text = f === '' ? pick(aggs) : `${f} | ${pick(aggs)}`;
      const q = compileQuery(text, { ctx });
      const { maps, agg } = splitAtAggregate(q);
      const run = (summaries: boolean, ordered = false): string => {
        const merged = agg.init();
        let matched = 0;
        blocks.forEach((evs, b) => {
          const result = { state: agg.init(), events: 0, bytes: 0, blocksRead: 0, blocksSkipped: 0, matched: 0, warnings: [] };
          const scanner = blockScanner(maps, agg, result, { start: ctx.start, end: ctx.end, columnPath: summaries, meter: new Meter(null), overTime: () => undefined });
          const sorted = ordered ? sortedOf(b) : undefined;
          if (summaries && scanner.summary(heads[b]!.columns!, evs.length, true, sorted)) {
            if (ordered) byOrder++;
            else summarised++;
            if (/\(x\)|x[<>]/.test(text) && heads[b]!.view.encoding('x') === 'u') textInts++;
          }
          else if (summaries && scanner.summaryVerdict(heads[b]!.columns!, evs.length, sorted) === 'none') summarySkipped++;
          else scanner.view(heads[b]!.view, true);
          scanner.flush();
          agg.merge(merged, structuredClone(result.state));
          matched += result.matched;
        });
        return `${matched}: ${sortedRows(agg.finish(merged))}`;
      };
      const perEvent = run(false);
      const fromSummaries = run(true);
      const withOrder = run(true, true);
      const oracle = sortedRows(JSON.parse(answer(q, blocks.map((evs) => evs.map(mapEvent)))).map((pairs: [string, string][]) => new MapEvent(pairs)));
      if (!perEvent.endsWith(`: ${oracle}`)) t.fail(`${text}: per event differs from MapEvents\nmap events: ${oracle}\nper event:  ${perEvent}`);
      if (fromSummaries !== perEvent) t.fail(`${text}: summaries differ\nper event: ${perEvent}\nsummaries: ${fromSummaries}`);
      if (withOrder !== perEvent) t.fail(`${text}: summaries with the kept integers in order differ\nper event: ${perEvent}\nin order:  ${withOrder}`);
      checked++;
    }
  }
  t.equal(checked, 320, `${checked} queries compared`);
  t.ok(summarised > 150, `${summarised} blocks answered from their column summaries`);
  t.ok(byOrder > summarised, `${byOrder} with the kept integers in order (count() of a range across a block's min and max)`);
  t.ok(textInts > 0, `${textInts} of them by the integers of a text column`);
  t.ok(summarySkipped > 0, `${summarySkipped} blocks left out because their column summaries say no row passes`);
});

t.test('scan: filters on two-byte dictionary codes (255 entries or more) and on integers as loops over the column', async (t) => {
  // 1200 rows: w has 300 distinct values (a dictionary of two-byte codes) and is absent from some
  // rows; m holds numbers as dictionary text (absent rows keep it from being an integer column);
  // n is an integer column.
  const r = rnd(7);
  const evs: Raw[] = Array.from({ length: 1200 }, (_, i) => {
    const fields: Record<string, string> = { n: String(Math.floor(r() * 2000) - 1000) };
    if (r() < 0.9) fields['w'] = `w-${Math.floor(r() * 300)}`;
    if (r() < 0.8) fields['m'] = String(Math.floor(r() * 280));
    return { ts: 1_000_000 + i, raw: `row ${i}`, fields, off: i };
  });
  const view = block(evs);
  t.equal(view.encoding('w'), 'k', 'w is a dictionary column');
  t.equal(view.dict('w')!.absent, 65535, 'with two-byte codes');
  t.equal(view.encoding('m'), 'k', 'm too');
  t.equal(view.encoding('n'), 'i', 'n is an integer column');
  for (const filter of ['w=w-7', 'w!=w-7', 'w=*', 'w!=*', 'w=w-1*', 'm>100', 'm<=3', 'm=42', 'm!=42', 'n>0', 'n<=-500', 'n>=1999', 'n<-1000', 'w=w-3 n>0', 'm>=200 w!=w-9']) {
    const text = `${filter} | count()`;
    const q = compileQuery(text, { ctx: ctxOf({ start: 0, end: 2_000_000 }) });
    const { maps, agg } = splitAtAggregate(q);
    const counts = [true, false].map((columnPath) => {
      const result = { state: agg.init(), events: 0, bytes: 0, blocksRead: 0, blocksSkipped: 0, matched: 0, warnings: [] };
      blockScanner(maps, agg, result, { start: 0, end: 2_000_000, columnPath, meter: new Meter(null), overTime: () => undefined }).view(view, true);
      return result.matched;
    });
    const oracle = JSON.parse(answer(q, [evs.map(mapEvent)]))[0][0][1];
    t.same(counts, [Number(oracle), Number(oracle)], `${text}: ${oracle} on both paths`);
  }
});

t.test('scan: the same for function filters and aggregates that offer column paths', async (t) => {
  compareScans(t, 21, SCAN_FUNCTION_FILTERS, SCAN_FUNCTION_AGGS);
});

t.test('the column path charges the groups it makes to the query memory budget', async (t) => {
  // 4000 distinct values of a text column: ~4000 groups of ~200 bytes each, past a 256 KiB budget.
  const evs: Raw[] = Array.from({ length: 4000 }, (_, i) => ({ ts: 1_000_000 + i, raw: `e${i}`, fields: { u: `value-${i}-${'x'.repeat(20)}` }, off: i }));
  const view = block(evs);
  for (const text of ['groupBy(u)', 'top(u)', 'u=* | groupBy(u)']) {
    for (const columnPath of [true, false]) {
      const q = compileQuery(text, { ctx: ctxOf({ start: 0, end: 2_000_000 }) });
      const { maps, agg } = splitAtAggregate(q);
      const budget = { query: new SharedArrayBuffer(8), node: new SharedArrayBuffer(8), queryLimit: 256 * 1024, nodeLimit: 1024 * 1024 * 1024 };
      const meter = new Meter(budget);
      const result = { state: agg.init(), events: 0, bytes: 0, blocksRead: 0, blocksSkipped: 0, matched: 0, warnings: [] };
      const scanner = blockScanner(maps, agg, result, { start: 0, end: 2_000_000, columnPath, meter, overTime: () => undefined });
      t.throws(() => withMeter(meter, () => scanner.view(view, true)), { code: 'E_QUERY_MEMORY' }, `${text}, ${columnPath ? 'column path' : 'per event'}: over the budget`);
    }
  }
});

t.test('scan tasks over segment files of formats 4 and 5: single-column reads = whole-block reads = per event', async (t) => {
  // Real files: the scan reads format 5 blocks' headers and directories, then each column it
  // needs by itself (column aggregates) or all frames at once (per-event stages); format 4 blocks
  // whole. Mixed: one task over a segment of each format, and in the range cut through blocks.
  const dir = await mkdtemp(join(tmpdir(), 'paths-formats-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const r = rnd(55);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const T0 = 1_000_000_000;
  const meta = { id: 'x', repo: 'r', ds: 'd', tags: ORIGIN.tags, partition: ORIGIN.partition, createdAt: 1 };
  const writeSegment = async (file: string, format: 4 | 5 | 6, blocks: Raw[][]): Promise<BlockRef[]> => {
    const head = encodeSegmentHeader(meta);
    head.writeUInt32LE(format, 4);
    const parts: Buffer[] = [head];
    let pos = head.length;
    const entries: BlockEntry[] = [];
    for (const evs of blocks) {
      const bytes = blockBytes(evs, format);
      entries.push({ ...readBlockMeta(bytes, 0)!, pos });
      parts.push(bytes);
      pos += bytes.length;
    }
    parts.push(encodeFooter({ blocks: entries, ...summarize(entries), closedAt: 2 }));
    await writeFile(file, Buffer.concat(parts));
    return entries;
  };
  let checked = 0;
  let t0 = T0;
  const segs: { path: string; blocks: BlockRef[] }[] = [];
  const all: Raw[] = [];
  for (const [k, format] of ([6, 4, 5, 6] as const).entries()) {
    const blocks: Raw[][] = [];
    for (let b = 0; b < 3; b++) {
      const evs = scanEvents(r, 40 + Math.floor(r() * 120), t0, pick([10, 100, 1000]));
      blocks.push(evs);
      all.push(...evs);
      t0 = evs[evs.length - 1]!.ts + 7;
    }
    const path = join(dir, `s${k}.seg`);
    segs.push({ path, blocks: await writeSegment(path, format, blocks) });
  }
  const lo = all[0]!.ts;
  const hi = all[all.length - 1]!.ts;
  for (let k = 0; k < 60; k++) {
    const cut = r() < 0.5;
    const start = cut ? lo + Math.floor(r() * (hi - lo) * 0.4) : lo - 60_000;
    const end = cut ? hi - Math.floor(r() * (hi - lo) * 0.4) : hi + 60_000;
    const steps = [pick(SCAN_FILTERS), pick(SCAN_FILTERS), pick(SCAN_REST)].filter((_, i) => r() < (i === 2 ? 0.2 : 0.6));
    const text = [...steps, pick(SCAN_AGGS)].join(' | ');
    const ctx = ctxOf({ start, end });
    const run = (perEvent: boolean): string => {
      const q = compileQuery(text, { ctx });
      const { agg } = splitAtAggregate(q);
      const res = runScanTask({ spec: { text, args: {}, ctx, limits: DEFAULT_LIMITS }, repoName: 'r', units: segs.map((s) => ({ kind: 'seg' as const, path: s.path, partition: ORIGIN.partition, tags: ORIGIN.tags, blocks: s.blocks })), deadline: Date.now() + 600_000, perEvent });
      if (res.warnings.length > 0) t.fail(`${text}: warnings ${res.warnings.join('; ')}`);
      return `${res.matched}/${res.events}: ${sortedRows(agg.finish(structuredClone(res.state)))}`;
    };
    const oracleQ = compileQuery(text, { ctx });
    const oracle = sortedRows(JSON.parse(answer(oracleQ, [all.filter((e) => e.ts >= start && e.ts <= end).map(mapEvent)])).map((pairs: [string, string][]) => new MapEvent(pairs)));
    const perEvent = run(true);
    const columns = run(false);
    if (!perEvent.endsWith(`: ${oracle}`)) t.fail(`${text}: per-event scan differs from MapEvents\nmap events: ${oracle}\nper event:  ${perEvent}`);
    if (columns !== perEvent) t.fail(`${text} [${start}, ${end}]: column scan differs\nper event: ${perEvent}\ncolumns:   ${columns}`);
    checked++;
  }
  t.equal(checked, 60, `${checked} random scans over mixed-format segment files compared`);
});
