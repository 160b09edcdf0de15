import t from 'tap';
import { fold } from '../../../src/query/casefold.js';
import { gramWords } from '../../../src/query/pruning.js';
import { GRAM, GramFilterBuilder, gramFilterMayContain, gramProbes } from '../../../src/segments/grams.js';
import { rnd } from '../../helpers/random.js';


const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
function word(r: () => number, len: number): string {
  let s = '';
  for (let i = 0; i < len; i++) s += ALNUM[Math.floor(r() * ALNUM.length)];
  return s;
}

const filterOf = (...texts: string[]): Buffer => {
  const b = new GramFilterBuilder();
  for (const x of texts) b.addText(x);
  return b.build();
};
const has = (f: Buffer, w: string): boolean => gramFilterMayContain(f, gramProbes(fold(w)));

t.test('every substring of a token run is found, in any case, wherever it sits in the run', async (t) => {
  const long = `X${'ab12'.repeat(30)}Zq7Xk2vBlm`; // the search word past the 64th character of its run
  const text = `GET /Api/V1/users?id=${long} HTTP/1.1 "Mozilla/5.0" naïve-Ünïcode 日本語テキスト`;
  const f = filterOf(text);
  const runs = text.split(/[^A-Za-z0-9\u0080-\uffff]+/).filter((r) => r.length >= GRAM);
  let checked = 0;
  let missing = 0;
  for (const run of runs) {
    for (let i = 0; i + GRAM <= run.length; i++) {
      for (let j = i + GRAM; j <= run.length; j++) {
        checked++;
        if (!has(f, run.slice(i, j)) || !has(f, run.slice(i, j).toUpperCase())) missing++;
      }
    }
  }
  t.ok(checked > 5_000, `${checked} substrings checked`);
  t.equal(missing, 0, 'no false negatives');
  t.ok(has(f, 'zq7xk2vblm'), 'past the 64th character');
  t.ok(has(f, 'ÜNÏC'), 'non-ASCII, folded');
});

t.test('grams do not cross token boundaries; words shorter than a gram cannot be ruled out', async (t) => {
  const f = filterOf('abc-defg hij');
  t.equal(has(f, 'bcde'), false, '"bc-de" holds no run "bcde"');
  t.equal(has(f, 'defg'), true);
  t.equal(gramProbes('abc').length, 0);
  t.equal(has(f, 'xyz'), true, 'no grams: nothing to rule out');
  const none = filterOf('a bc def - 1');
  t.equal(none.length, 128, 'a block without grams: the minimum filter, all zero');
  t.equal(has(none, 'abcd'), false, 'which rules every word out');
  t.equal(gramFilterMayContain(Buffer.alloc(0), gramProbes('abcd')), true, 'an empty filter (format 1 block) rules nothing out');
});

t.test('absent words mostly pass no block; the filter folds to its content', async (t) => {
  const r = rnd(7);
  for (const distinct of [50, 5_000, 60_000, 400_000]) {
    const b = new GramFilterBuilder();
    const lines: string[] = [];
    for (let i = 0; i < distinct / 7; i++) lines.push(`${word(r, 10)} ${word(r, 3)}`);
    for (const l of lines) b.addText(l);
    const f = b.build();
    let ones = 0;
    for (const byte of f) for (let k = 0; k < 8; k++) ones += (byte >> k) & 1;
    const fill = ones / (f.length * 8);
    t.ok(f.length >= 128 && f.length <= 128 * 1024, `${distinct} grams: ${f.length} bytes`);
    if (f.length > 128 && f.length < 128 * 1024) t.ok(fill > 0.2 && fill <= 0.5, `${distinct} grams: fill ${fill.toFixed(3)} at most 0.5 (folded as far as allowed)`);
    let fp = 0;
    const trials = 2000;
    for (let i = 0; i < trials; i++) if (has(f, word(r, 10))) fp++;
    t.ok(fp / trials < 0.01, `${distinct} grams: ${fp} of ${trials} absent 10-character words pass`);
    const sample = lines.slice(0, 200);
    t.equal(sample.filter((l) => has(f, l.slice(2, 9))).length, sample.length, 'present words always pass');
  }
});

t.test('query words: token runs of the search pieces, folded, at least a gram long, capped', async (t) => {
  t.strictSame(gramWords(['GET /LOGIN-page x', 'abc', 'Zq7Xk']), ['login', 'page', 'zq7xk']);
  t.strictSame(gramWords(['q'.repeat(100)]), ['q'.repeat(36)]);
  t.strictSame(gramWords(['']), []);
});
