/**
 * replace()'s fast path (regex-substitute.ts): a literal pattern with a plain replacement gives
 * exactly what String.replace with the compiled global regex gives, on random text (ASCII,
 * Latin-1, line ends, Unicode spaces, surrogate pairs and halves); other patterns (classes
 * included) and replacements with `$` take the general path. And the column path of a one-unit
 * pattern (ColumnSubstitution, columns.ts substituteAsciiUnits): over a stored text column of
 * segment blocks (formats 4 to 6) it gives what the regex gives value by value; and over a
 * dictionary column (PerEntry) each entry is replaced once, with the answers of row by row.
 */
import t from 'tap';
import type { Test } from 'tap';
import { BlockView, ColumnEvent } from '../../../src/query/block-view.js';
import { chainStages } from '../../../src/query/pipeline.js';
import { compileRegex } from '../../../src/query/regex.js';
import { ColumnSubstitution, literalOf, oneUnitPattern, substitution } from '../../../src/query/regex-substitute.js';
import { PerEntry } from '../../../src/query/per-entry.js';
import { MapEvent, type MapStage } from '../../../src/query/runtime.js';
import { appendEvent, assembleBlock, assembleBlockV5, emptyColumns, encodeBlockContent, encodedBlockAt, readBlockMeta } from '../../../src/segments/block.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { substituteAsciiUnits } from '../../../src/segments/columns.js';
import { rnd } from '../../helpers/random.js';
import { compileQuery } from '../../../src/query/compile.js';
import { ctxOf, ev, rowsOf } from './driver.js';

const fail = (m: string): never => {
  throw new Error(m);
};

/** [pattern as the query writes it (after string unescaping), flags, has a fast path, matches one unit]. */
const PATTERNS: [string, string, boolean, boolean?][] = [
  ['\\d', 'm', false, true],
  ['\\D', 'm', false, true],
  ['\\w', '', false, true],
  ['\\W', 'm', false, true],
  ['\\s', 'm', false, true],
  ['\\S', '', false, true],
  ['.', 'm', false, true],
  ['.', 'd', false, true],
  ['[aeiou]', 'm', false, true],
  ['[^a-c0-9]', 'm', false, true],
  ['[\\]x-]', 'm', false, true],
  ['[]', 'm', false, true],
  ['[^]', 'm', false, true],
  ['a', 'i', false, true],
  ['[a-cX]', 'i', false, true],
  ['ä', 'i', false, true],
  ['é', 'm', true, true],
  ['ab', 'm', true],
  ['ab', 'i', false],
  ['\\.', 'm', true, true],
  ['a.b', 'm', false],
  ['/x', 'm', true],
  ['\\n', 'm', false, true],
  ['\\d+', 'm', false],
  ['\\d\\d', 'm', false],
  ['[a]b', 'm', false],
  ['(?<g>x)', 'm', false],
  ['x|y', 'm', false],
  ['^a', 'm', false],
  ['\\bab', 'm', false],
  ['(?i)a', 'm', false, true],
  ['\\u00e4', 'm', false],
  ['[\\u00e4x]', 'm', false, true],
  ['\\x41', 'm', false],
  ['a', 'm', true, true],
  ['-', 'm', true, true],
  ['\\$', 'm', true, true],
  ['😀', 'm', true],
  ['\\]', 'm', true, true],
  ['a-', 'd', true],
  ['b\\/', 'm', true],
  ['\\b', 'm', false],
  ['[^\\d]', 'm', false, true],
];

const UNITS = ['a', 'b', 'c', 'A', 'X', 'x', 'y', '0', '7', ' ', '\t', '\n', '\r', '\u2028', '\u00a0', '\u3000', 'ä', 'Ä', 'é', '.', '/', ']', '-', '😀', '\ud800', 'ab', 'ab', '$', '#'];

function text(r: () => number): string {
  let s = '';
  const n = Math.floor(r() * 14);
  for (let i = 0; i < n; i++) s += UNITS[Math.floor(r() * UNITS.length)]!;
  return s;
}

t.test('literal patterns are recognized from the compiled source', async (t) => {
  t.equal(literalOf('ab\\.c\\/'), 'ab.c/');
  t.equal(literalOf('a\\d'), null);
  t.equal(literalOf(''), null);
  t.equal(literalOf('a*'), null);
  for (const [p, flags, fast] of PATTERNS) {
    const cr = compileRegex(p, flags, fail);
    t.equal(substitution(cr, '#') !== null, fast, `/${p}/${flags} ${fast ? 'has' : 'has no'} fast path`);
  }
  t.equal(substitution(compileRegex('ab', 'm', fail), '<$&>'), null, 'a replacement with $ takes the regex');
  for (const [p, flags, , one] of PATTERNS) {
    const cr = compileRegex(p, flags, fail);
    t.equal(oneUnitPattern(cr.all.source, cr.all.flags), one === true, `/${p}/${flags} (compiled /${cr.all.source}/) ${one === true ? 'matches' : 'does not match'} one unit`);
  }
  t.equal(oneUnitPattern('\\d', 'gu'), false, 'not under u');
});

t.test('the fast path gives what the regex gives, on random text', async (t) => {
  const r = rnd(211128);
  let checked = 0;
  for (const [p, flags] of PATTERNS) {
    const cr = compileRegex(p, flags, fail);
    for (const rep of ['#', '', 'xy', '\\', 'ab']) {
      const fast = substitution(cr, rep);
      if (fast === null) continue;
      for (let i = 0; i < 200; i++) {
        const v = text(r);
        cr.all.lastIndex = 0;
        const want = v.replace(cr.all, rep);
        const got = fast(v);
        if (got !== want) t.fail(`/${p}/${flags} on ${JSON.stringify(v)} with ${JSON.stringify(rep)}: ${JSON.stringify(got)}, the regex gives ${JSON.stringify(want)}`);
        checked++;
      }
    }
  }
  t.ok(checked > 10_000, `${checked} values checked`);
  const same = 'no literal here';
  t.equal(substitution(compileRegex('ab', 'm', fail), '#')!(same), same, 'nothing matched: the value itself');
});

t.test('replace() through a query: fast and general paths give the same fields', async (t) => {
  const evs = ['/api/v2/users/123', 'nodigits', '', 'a1b22c333', 'ÄÖ9 x\n7'].map((u) => ev(`GET ${u}`, { url: u }));
  const fast = rowsOf('replace("2", with="#", field=url, as=r) | table([url, r])', evs);
  const general = rowsOf('replace("(2)", with="#", field=url, as=r) | table([url, r])', evs);
  t.strictSame(fast, general);
  t.strictSame(
    fast.map((x) => x['r']),
    ['/api/v#/users/1#3', 'nodigits', '', 'a1b##c333', 'ÄÖ9 x\n7'],
  );
  t.strictSame(rowsOf('replace("v2", with="v3", field=url) | table([url])', evs).map((x) => x['url']), ['/api/v3/users/123', 'nodigits', '', 'a1b22c333', 'ÄÖ9 x\n7']);
});

t.test('replace(): the value bound, decided once from the replacement, refuses exactly the results past it', async (t) => {
  // MAX_VALUE_CHARS is 16 Mi characters: values of 6 Mi, replaced with 2 or 3 characters per match.
  const big = 'a'.repeat(6 * 1024 * 1024);
  const err = { code: 'E_QUERY_LIMIT', message: /replace: the result would be at least/ };
  t.throws(() => rowsOf('replace("a", with="bbb", field=v, as=r) | r=* | count()', [ev('x', { v: big })]), err, '18 Mi characters');
  t.throws(() => rowsOf('replace("(a)", with="$1$1$1", field=v, as=r) | r=* | count()', [ev('x', { v: big })]), err, 'group references: 18 Mi');
  t.strictSame(rowsOf('replace("a", with="bb", field=v, as=r) | r=* | count()', [ev('x', { v: big })]), [{ _count: '1' }], '12 Mi: under the bound');
  t.strictSame(rowsOf('replace("z", with="bbbb", field=v, as=r) | r=* | count()', [ev('x', { v: big })]), [{ _count: '1' }], 'no match: the value as it was');
});

// --- the column path of one-unit patterns -----------------------------------------------------------

const ORIGIN = { repoName: 'r', partition: 1, tags: { type: 'kv' } };

/** A segment block (format 4 to 6) with the values in field `u` (undefined: the row has none). */
function blockOf(values: readonly (string | undefined)[], format: 4 | 5 | 6): BlockView {
  const c = emptyColumns();
  values.forEach((v, i) => appendEvent(c, 1_000_000 + i, 'Z', `row ${i}`, v === undefined ? { k: 'x' } : { k: i % 3 === 0 ? 'x' : 'y', u: v }, 5, 100 + i, 0));
  const content = encodeBlockContent(c);
  if (format === 4) return BlockView.fromBody(content.body, ORIGIN);
  const bytes = format === 6 ? assembleBlock(content, lz4Codec) : assembleBlockV5(content, lz4Codec);
  return BlockView.fromEncoded(encodedBlockAt(bytes, 0, readBlockMeta(bytes, 0)!, lz4Codec), ORIGIN);
}

/** Distinct values (a text column, not a dictionary), some absent, some long, half of them ASCII. */
function columnValues(r: () => number, n: number): (string | undefined)[] {
  const ascii = (v: string): string => (r() < 0.5 ? v.replace(/[^\x00-\x7f]/g, '') : v);
  return Array.from({ length: n }, (_, i) => (r() < 0.1 ? undefined : `${r() < 0.05 ? 'q'.repeat(40) : ''}${ascii(text(r))}${i}`));
}

const REPLACEMENTS = ['#', '', 'xy', 'é', '😀', '\\', '.'];
const ONE_UNIT = PATTERNS.filter((p) => p[3] === true);

t.test('a one-unit pattern over a text column: each row what the regex gives, or left to it', async (t) => {
  const r = rnd(261129);
  let byColumn = 0;
  let left = 0;
  for (const [p, flags] of ONE_UNIT) {
    const cr = compileRegex(p, flags, fail);
    for (const rep of REPLACEMENTS) {
      const view = blockOf(columnValues(r, 40 + Math.floor(r() * 80)), ([4, 5, 6] as const)[Math.floor(r() * 3)]!);
      t.equal(view.encoding('u'), 'u', 'a text column');
      // maxUnits 30: the long values (40 q's) are left to the regex.
      const col = ColumnSubstitution.of(cr, rep, 'u', 30);
      if (col === null) {
        t.fail(`/${p}/${flags} with ${JSON.stringify(rep)}: no column path`);
        continue;
      }
      for (let i = 0; i < view.n; i++) {
        const v = view.get('u', i);
        const got = col.rowValue(new ColumnEvent(view, i));
        if (got === undefined) {
          left++;
          continue;
        }
        byColumn++;
        cr.all.lastIndex = 0;
        const want = v === undefined ? null : v.replace(cr.all, rep);
        if (got !== want) t.fail(`/${p}/${flags} on ${JSON.stringify(v)} with ${JSON.stringify(rep)}: ${JSON.stringify(got)}, the regex gives ${JSON.stringify(want)}`);
        if (v !== undefined && (v.length > 30 || /[^\x00-\x7f]/.test(v))) t.fail(`${JSON.stringify(v)}: a long or non-ASCII value answered by the column`);
      }
    }
  }
  t.ok(byColumn > 5000, `${byColumn} rows answered by the column, ${left} left to the regex`);
  t.equal(ColumnSubstitution.of(compileRegex('\\d', 'm', fail), '<$&>', 'u', 30), null, 'a replacement with $: no column path');
  t.equal(ColumnSubstitution.of(compileRegex('\\d+', 'm', fail), '#', 'u', 30), null, 'more than one unit: none');
  t.equal(ColumnSubstitution.of(compileRegex('\\d', 'm', fail), '#', '@rawstring', 30), null, 'a built-in field: none');
  t.equal(ColumnSubstitution.of(compileRegex('\\d', 'm', fail), '\ud800', 'u', 30), null, 'a lone surrogate in the replacement: none');
});

t.test('substituteAsciiUnits: absent rows, the result bound, a column shorter than its lengths', async (t) => {
  const view = blockOf(['a1', undefined, 'b22', 'ä3', `x${'9'.repeat(20)}`], 6);
  const hit = new Uint8Array(128);
  for (let c = 48; c < 58; c++) hit[c] = 1;
  const run = view.textRun('u')!;
  t.strictSame(substituteAsciiUnits(run, view.n, hit, '#', 10, 1000), ['a#', null, 'b##', undefined, undefined]);
  t.strictSame(substituteAsciiUnits(run, view.n, hit, '<>', 100, 1000), ['a<>', null, 'b<><>', undefined, `x${'<>'.repeat(20)}`]);
  t.equal(substituteAsciiUnits(run, view.n, hit, '<>', 100, 20), null, 'past maxBytes: none');
  t.throws(() => substituteAsciiUnits({ b: run.b.subarray(0, run.b.length - 1), l: run.l }, view.n, hit, '#', 100, 1000), { code: 'E_STATE_CORRUPT' });
  t.throws(() => substituteAsciiUnits({ b: run.b.subarray(0, run.b.length - 1), l: run.l }, view.n, hit, '', 100, 1000), { code: 'E_STATE_CORRUPT' });
});

/** What a query's stages up to its aggregate leave in `u` and `r` per event. */
function fieldsAfter(text: string, events: Iterable<ColumnEvent | MapEvent>): string {
  const q = compileQuery(`${text} | count()`, { ctx: ctxOf() });
  const out: (string | undefined)[][] = [];
  const feed = chainStages(q.stages.slice(0, -1) as MapStage[], (e) => out.push([e.get('u'), e.get('r')]));
  for (const e of events) feed(e);
  return JSON.stringify(out);
}

/** Each query over fresh ColumnEvents of each block against MapEvents of the same values; the number compared. */
function sameAnswers(t: Test, queries: readonly string[], views: readonly BlockView[]): number {
  let checked = 0;
  for (const view of views) {
    for (const text of queries) {
      // Fresh events for each query (a query sets fields on them).
      const [columns, perEvent] = bothWays(view);
      if (fieldsAfter(text, columns) !== fieldsAfter(text, perEvent)) t.fail(`${text}: the column path differs`);
      checked++;
    }
  }
  return checked;
}

/** The block's rows as ColumnEvents, and as MapEvents of the same k and u. */
function bothWays(view: BlockView): [ColumnEvent[], MapEvent[]] {
  const rows = Array.from({ length: view.n }, (_, i) => i);
  const u = (i: number): [string, string][] => (view.get('u', i) === undefined ? [] : [['u', view.get('u', i)!]]);
  return [rows.map((i) => new ColumnEvent(view, i)), rows.map((i) => new MapEvent([['k', view.get('k', i)!], ...u(i)]))];
}

t.test('replace() over a dictionary column: each entry once, the answers of row by row', async (t) => {
  const r = rnd(291127);
  const ENTRIES = ['GET /a1', 'POST /b22', 'ÄÖ 3', '', 'x'.repeat(20), 'v2 v2'];
  const QUERIES = [
    'replace("\\\\d", with="#", field=u, as=r)',
    'replace("\\\\d+", with="<$0>", field=u, as=r)',
    'replace("(?<w>[A-Z]+) ", with="${w}-", field=u)',
    'replace("v2", with="v3", field=u, as=r)',
    'k=x | replace("[^a-z]", with="", field=u, as=r)',
  ];
  const views = [0, 1, 2, 3, 4, 5].map((round) => blockOf(Array.from({ length: 50 + Math.floor(r() * 100) }, () => (r() < 0.1 ? undefined : ENTRIES[Math.floor(r() * ENTRIES.length)])), ([4, 5, 6] as const)[round % 3]!));
  t.equal(sameAnswers(t, QUERIES, views), 6 * QUERIES.length);
  for (const view of views) {
    t.equal(view.encoding('u'), 'k', 'a dictionary column');
    let asked = 0;
    const entries = PerEntry.of('u', (v) => {
      asked++;
      return v.toUpperCase();
    })!;
    for (const e of bothWays(view)[0]) t.equal(entries.rowValue(e), e.get('u')?.toUpperCase() ?? null);
    t.ok(asked <= view.dict('u')!.d.length, `${asked} answers asked for ${view.n} rows`);
  }
  // The value bound refuses at the same row either way (18 Mi characters from a 6 Mi entry).
  const big = blockOf(['a', 'a'.repeat(6 * 1024 * 1024), 'a', 'a'.repeat(6 * 1024 * 1024)], 6);
  const [columns, perEvent] = bothWays(big);
  const err = { code: 'E_QUERY_LIMIT', message: /replace: the result would be at least/ };
  t.throws(() => fieldsAfter('replace("(a)", with="$1$1$1", field=u, as=r)', columns), err);
  t.throws(() => fieldsAfter('replace("(a)", with="$1$1$1", field=u, as=r)', perEvent), err);
  t.equal(PerEntry.of('@rawstring', (v) => v), null, 'a built-in field: none');
});

t.test('replace() through a query: ColumnEvents of blocks = MapEvents, dense and sparse rows, chained', async (t) => {
  const r = rnd(291126);
  const QUERIES = [
    'replace("\\\\d", with="#", field=u, as=r)',
    'replace("[aeiou]", with="", field=u)',
    'replace(".", with="é", field=u, as=r, flags=s)',
    'replace("\\\\W", with="_", field=u, as=r) | replace("\\\\d", with="#", field=r)',
    'k=x | replace("\\\\d", with="##", field=u, as=r)',
    'u=/7/ | replace("a", with="A", field=u, as=r, flags=i)',
    'replace("\\\\s", with="%", field=nosuch, as=r)',
  ];
  const views = Array.from({ length: 12 }, (_, round) => blockOf(columnValues(r, 100 + Math.floor(r() * 200)), ([4, 5, 6] as const)[round % 3]!));
  t.equal(sameAnswers(t, QUERIES, views), 12 * QUERIES.length);
});
