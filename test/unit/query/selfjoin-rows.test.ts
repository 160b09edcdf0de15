/**
 * selfJoin and selfJoinFilter keep the rows of a block read in a scan by reference (correlation.ts
 * KeptBlock: the block's columns while at least half its rows are kept, copies of the rows once
 * fewer are), and read a row's fields only when its key qualifies. Property: on random blocks
 * (segment formats 4, 5 and 6 and a block in memory; states cloned and merged in any grouping, a
 * block's rows split over states, events changed upstream kept as copies beside references) they
 * give exactly what copying every event (MapEvents of the same fields) gives; and a block's row
 * columns read back exactly what names() and get() give.
 */
import t from 'tap';
import { BlockView, ColumnEvent, rowFlat } from '../../../src/query/block-view.js';
import { compileQuery } from '../../../src/query/compile.js';
import { chainStages } from '../../../src/query/pipeline.js';
import { entriesOf, MapEvent, type Aggregator, type CompiledQuery, type Ev, type MapStage } from '../../../src/query/runtime.js';
import { appendEvent, assembleBlock, assembleBlockV4, assembleBlockV5, emptyColumns, encodeBlockContent, encodedBlockAt, readBlockMeta } from '../../../src/segments/block.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { bodyColumns } from '../../../src/segments/frames.js';
import { rnd } from '../../helpers/random.js';
import { ctxOf } from './driver.js';

interface Raw {
  ts: number;
  raw: string;
  fields: Record<string, string>;
  off: number;
}

const WORDS = ['login', 'logout', 'view', 'alpha', 'ÄÖ', 'x y'];
const ORIGIN = { repoName: 'r', partition: 3, tags: { type: 'kv', repo: 'shadow' } };

function events(r: () => number, n: number, base: number): Raw[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  return Array.from({ length: n }, (_, i) => {
    const fields: Record<string, string> = {};
    if (r() < 0.9) fields['k'] = pick(['a', 'b', 'c', 'd', 'e', 'f']);
    if (r() < 0.8) fields['x'] = String(Math.floor(r() * 1000) - 100);
    if (r() < 0.8) fields['y'] = pick(WORDS);
    if (r() < 0.2) fields['#tagged'] = pick(WORDS);
    const raw = r() < 0.6 ? `${fields['y'] ?? pick(WORDS)} v=${fields['x'] ?? '-'}` : `${pick(WORDS)} ${pick(WORDS)}`;
    // Timestamps repeat: ties are broken by content.
    return { ts: 1_000_000 + Math.floor((base + i) / 3) * 1000, raw, fields, off: base + i };
  });
}

function view(evs: readonly Raw[], format: 4 | 5 | 6 | 0): BlockView {
  const c = emptyColumns();
  for (const e of evs) appendEvent(c, e.ts, e.off % 5 === 0 ? '+01:00' : 'Z', e.raw, e.fields, 7, e.off, e.off % 4);
  if (format === 0) return BlockView.fromColumns(c, ORIGIN);
  const content = encodeBlockContent(c);
  const bytes = format === 6 ? assembleBlock(content, lz4Codec) : format === 5 ? assembleBlockV5(content, lz4Codec) : assembleBlockV4(content, lz4Codec);
  const m = readBlockMeta(bytes, 0)!;
  return BlockView.fromEncoded(encodedBlockAt(bytes, 0, m, lz4Codec), ORIGIN);
}

const flatOfEv = (e: Ev): string[] => entriesOf(e).flat();

t.test('row columns read back what names() and get() give', async (t) => {
  const r = rnd(4242);
  for (const format of [0, 4, 5, 6] as const) {
    const evs = events(r, 50, 0);
    const v = view(evs, format);
    const rc = v.rowColumns();
    t.ok(rc !== null);
    for (let i = 0; i < v.n; i++) t.strictSame(rowFlat(rc!, i), flatOfEv(new ColumnEvent(v, i)), `format ${format} row ${i}`);
  }
  const shadowing = view([{ ts: 1, raw: 'r', fields: { '@id': 'mine' }, off: 1 }], 6);
  t.equal(shadowing.rowColumns(), null, 'a stored field named like a built-in: no row columns');
});

t.test('a block as stored (encodedBody) reads back the same rows, holds no large buffer, and survives a structured clone', async (t) => {
  const r = rnd(4343);
  // Format 0 here: a whole msgpack body (BlockView.fromBody), whose columns are views into the bytes it is read from.
  for (const format of [0, 4, 5, 6] as const) {
    const evs = events(r, 60, 0);
    const c = emptyColumns();
    for (const e of evs) appendEvent(c, e.ts, 'Z', e.raw, e.fields, 7, e.off, 0);
    const content = encodeBlockContent(c);
    const bytes = format === 0 ? content.body : format === 6 ? assembleBlock(content, lz4Codec) : format === 5 ? assembleBlockV5(content, lz4Codec) : assembleBlockV4(content, lz4Codec);
    // The block inside a large buffer, as a block of a segment file read whole.
    const at = 512 * 1024;
    const big = Buffer.alloc(bytes.length + 1024 * 1024);
    bytes.copy(big, at);
    const v = format === 0 ? BlockView.fromBody(big.subarray(at, at + bytes.length), ORIGIN) : BlockView.fromEncoded(encodedBlockAt(big, at, readBlockMeta(big, at)!, lz4Codec), ORIGIN);
    const body = v.encodedBody()!;
    const large: string[] = [];
    const walk = (x: unknown, path: string): void => {
      if (ArrayBuffer.isView(x)) {
        if (x.buffer === big.buffer) large.push(path);
      } else if (x !== null && typeof x === 'object') for (const [k, y] of Object.entries(x)) walk(y, `${path}.${k}`);
    };
    walk(body, 'body');
    t.strictSame(large, [], `format ${format}: no column is a view into the whole buffer the block was read from`);
    for (const b of [body, structuredClone(body)]) {
      const rc = BlockView.fromEncoded(bodyColumns(b), ORIGIN).rowColumns()!;
      const same = Array.from({ length: v.n }, (_, i) => JSON.stringify(rowFlat(rc, i)) === JSON.stringify(flatOfEv(new ColumnEvent(v, i)))).every(Boolean);
      t.ok(same, `format ${format}${b === body ? '' : ', cloned'}: the rows of the view`);
    }
  }
});

const QUERIES = [
  'selfJoinFilter(k, where=[{y=login}, {x>100}])',
  'selfJoinFilter(k, where=[{y=login}, {y=logout}], prefilter=true)',
  'selfJoinFilter([k, y], where=[{x>0}, {x<500}])',
  'selfJoinFilter(k, where=[{@rawstring=/v=(?<n>\\d+)/}, {y=view}])',
  'selfJoin(k, where=[{y=login}, {x>100}], collect=[y, x])',
  'selfJoin(k, where=[{y=login}, {y=view}], select=[x])',
  'selfJoin(k, where=[{y=login}, {x>0}], postfilter=true, prefilter=true)',
  'case { x > 600 | w := "big" ; * } | selfJoinFilter(k, where=[{y=login}, {x>100}])',
  'w := x * 2 | selfJoinFilter(k, where=[{y=alpha}, {w>100}])',
];

function aggOf(q: CompiledQuery): { agg: Aggregator<unknown>; maps: MapStage[] } {
  const at = q.stages.findIndex((s) => s.kind === 'agg');
  return { agg: (q.stages[at] as { agg: Aggregator<unknown> }).agg, maps: q.stages.slice(0, at) as MapStage[] };
}

/** The answer from states over `groups` of events (each group one state, cloned), merged in order. */
function answer(q: CompiledQuery, groups: Ev[][]): string {
  const { agg, maps } = aggOf(q);
  const merged = agg.init();
  for (const g of groups) {
    const st = agg.init();
    const feed = chainStages(maps, (e) => agg.add(st, e));
    for (const e of g) feed(e);
    agg.merge(merged, structuredClone(st));
  }
  return JSON.stringify(agg.finish(merged).map((x) => entriesOf(x)));
}

t.test('selfJoin/selfJoinFilter: rows kept by reference = every event copied', async (t) => {
  const r = rnd(Number(process.env.PROPERTY_SEED ?? 20261128));
  let checked = 0;
  let rowsOut = 0;
  const wrong: string[] = [];
  for (let round = 0; round < 30; round++) {
    // Blocks of several formats and sizes; a small one keeps few rows (compacted), a large one many.
    const sizes = [5 + Math.floor(r() * 80), 5 + Math.floor(r() * 80), 5 + Math.floor(r() * 80), 2 + Math.floor(r() * 6)];
    let base = 0;
    const views = sizes.map((n, i) => {
      const v = view(events(r, n, base), ([6, 5, 4, 0] as const)[i]!);
      base += n;
      return v;
    });
    const rows = views.map((v) => Array.from({ length: v.n }, (_, i) => i));
    // Groupings: one state for all blocks; a state per block; a block's rows split over two
    // states; a block read again after another (A B A).
    const col = (vi: number, rs: number[]): Ev[] => rs.map((i) => new ColumnEvent(views[vi]!, i));
    const groupings: Ev[][][] = [
      [views.flatMap((_, vi) => col(vi, rows[vi]!))],
      views.map((_, vi) => col(vi, rows[vi]!)),
      views.flatMap((_, vi) => {
        const cut = Math.floor(r() * (rows[vi]!.length + 1));
        return [col(vi, rows[vi]!.slice(0, cut)), col(vi, rows[vi]!.slice(cut))];
      }),
      [[...col(0, rows[0]!.slice(0, 3)), ...col(1, rows[1]!), ...col(0, rows[0]!.slice(3)), ...col(2, rows[2]!), ...col(3, rows[3]!)]],
    ];
    for (const text of QUERIES) {
      const q = compileQuery(text, { ctx: ctxOf() });
      // The straightforward way: every event a MapEvent copy of the row (kept as a flat copy).
      const copies = views.flatMap((v, vi) => rows[vi]!.map((i) => new MapEvent(entriesOf(new ColumnEvent(v, i)))));
      const want = answer(q, [copies]);
      rowsOut += (JSON.parse(want) as unknown[]).length;
      for (const g of groupings) {
        const got = answer(q, g);
        if (got !== want) wrong.push(`${text}: ${got.slice(0, 300)} != ${want.slice(0, 300)}`);
        checked++;
      }
    }
  }
  t.strictSame(wrong.slice(0, 3), [], `${wrong.length} answers differ`);
  t.equal(checked, 30 * QUERIES.length * 4);
  t.ok(rowsOut > 500, `${rowsOut} rows compared`);
});
