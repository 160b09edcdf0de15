/**
 * replace()'s fast path (regex-substitute.ts): a literal pattern with a plain replacement gives
 * exactly what String.replace with the compiled global regex gives, on random text (ASCII,
 * Latin-1, line ends, Unicode spaces, surrogate pairs and halves); other patterns (classes
 * included) and replacements with `$` take the general path.
 */
import t from 'tap';
import { compileRegex } from '../../../src/query/regex.js';
import { literalOf, substitution } from '../../../src/query/regex-substitute.js';
import { rnd } from '../../helpers/random.js';
import { ev, rowsOf } from './driver.js';

const fail = (m: string): never => {
  throw new Error(m);
};

/** [pattern as the query writes it (after string unescaping), flags, has a fast path]. */
const PATTERNS: [string, string, boolean][] = [
  ['\\d', 'm', false],
  ['\\D', 'm', false],
  ['\\w', '', false],
  ['\\W', 'm', false],
  ['\\s', 'm', false],
  ['\\S', '', false],
  ['.', 'm', false],
  ['.', 'd', false],
  ['[aeiou]', 'm', false],
  ['[^a-c0-9]', 'm', false],
  ['[\\]x-]', 'm', false],
  ['[]', 'm', false],
  ['[^]', 'm', false],
  ['a', 'i', false],
  ['[a-cX]', 'i', false],
  ['ä', 'i', false],
  ['é', 'm', true],
  ['ab', 'm', true],
  ['ab', 'i', false],
  ['\\.', 'm', true],
  ['a.b', 'm', false],
  ['/x', 'm', true],
  ['\\n', 'm', false],
  ['\\d+', 'm', false],
  ['\\d\\d', 'm', false],
  ['[a]b', 'm', false],
  ['(?<g>x)', 'm', false],
  ['x|y', 'm', false],
  ['^a', 'm', false],
  ['\\bab', 'm', false],
  ['(?i)a', 'm', false],
  ['\\u00e4', 'm', false],
  ['[\\u00e4x]', 'm', false],
  ['\\x41', 'm', false],
  ['a', 'm', true],
  ['-', 'm', true],
  ['\\$', 'm', true],
  ['😀', 'm', true],
  ['\\]', 'm', true],
  ['a-', 'd', true],
  ['b\\/', 'm', true],
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
