/**
 * foldedIncludes (the free-text test that folds nothing per call for ASCII needles) finds exactly
 * what folding both sides and `includes` finds, on random text full of the units where case
 * folding is irregular.
 */
import t from 'tap';
import { fold, foldedIncludes } from '../../../src/query/casefold.js';
import { rnd } from '../../helpers/random.js';

const UNITS = ['a', 'k', 'K', 'S', 's', 'i', 'I', '\u212a', '\u017f', '\u0130', '\u0131', '\u03a3', '\u03c2', 'ß', 'Ä', 'ä', '.', '*', '[', '\\', '(', ' ', '-', '0', '9', 'z', 'Z', '\ud83d', '\ude00', 'é'];

t.test('foldedIncludes = fold(s).includes(fold(needle))', async (t) => {
  const r = rnd(21);
  const word = (max: number): string => Array.from({ length: Math.floor(r() * max) }, () => UNITS[Math.floor(r() * UNITS.length)]!).join('');
  let differ = 0;
  let hits = 0;
  for (let k = 0; k < 400; k++) {
    const needle = word(4);
    const test = foldedIncludes(needle);
    for (let j = 0; j < 50; j++) {
      const s = r() < 0.5 ? word(12) : `${word(4)}${needle.toUpperCase()}${word(4)}`;
      const want = fold(s).includes(fold(needle));
      if (want) hits++;
      if (test(s) !== want) {
        differ++;
        if (differ < 5) t.fail(`needle ${JSON.stringify(needle)} in ${JSON.stringify(s)}: ${test(s)}, folding gives ${want}`);
      }
    }
  }
  t.equal(differ, 0, 'no difference');
  t.ok(hits > 1000, `${hits} matches among 20000`);
  t.ok(foldedIncludes('KELVIN')('\u212aelvin'), 'the Kelvin sign folds to k');
  t.notOk(foldedIncludes('s')('\u017f'), 'long s does not fold to s');
});
