/**
 * NumberTally and the number texts (number-tally.ts): distinct values in order of first
 * occurrence with their counts, as a Map would give them, block after block on the reused
 * table; texts as String() and dotted quads make them, before and after the memo's bound.
 */
import t from 'tap';
import { intText, ipv4Dotted, ipv4Text, NumberTally } from '../../../src/query/number-tally.js';
import { rnd } from '../../helpers/random.js';

t.test('a tally equals a Map of counts in order of first occurrence, block after block', async (t) => {
  const r = rnd(11);
  const tally = new NumberTally();
  for (let round = 0; round < 300; round++) {
    const n = Math.floor(r() * 3000);
    const spread = [3, 100, 5000, 2 ** 31, 2 ** 52][round % 5]!;
    const values = Array.from({ length: n }, () => Math.floor((r() - (round % 2 === 0 ? 0 : 0.5)) * spread));
    const expected = new Map<number, number>();
    for (const x of values) expected.set(x, (expected.get(x) ?? 0) + 1);
    tally.reset(n);
    for (const x of values) tally.add(x);
    const got = new Map<number, number>();
    for (let k = 0; k < tally.size; k++) got.set(tally.value(k), tally.count(k));
    if (JSON.stringify([...got]) !== JSON.stringify([...expected])) {
      t.fail(`round ${round}: ${tally.size} values, expected ${expected.size}`);
      return;
    }
  }
  t.pass('300 blocks tallied as a Map tallies them');
});

t.test('a tally kept across blocks (reserve) equals a Map of counts over all of them', async (t) => {
  const r = rnd(13);
  for (let round = 0; round < 60; round++) {
    const tally = new NumberTally();
    if (round % 2 === 1) tally.reset(Math.floor(r() * 50));
    const spread = [3, 100, 5000, 2 ** 31, 2 ** 52][round % 5]!;
    const expected = new Map<number, number>();
    for (let b = 0; b < 1 + Math.floor(r() * 20); b++) {
      const n = Math.floor(r() * 400);
      tally.reserve(n);
      for (let i = 0; i < n; i++) {
        const x = Math.floor((r() - 0.5) * spread);
        expected.set(x, (expected.get(x) ?? 0) + 1);
        tally.add(x);
      }
    }
    const got = new Map<number, number>();
    for (let k = 0; k < tally.size; k++) got.set(tally.value(k), tally.count(k));
    t.strictSame([...got], [...expected], `round ${round}: ${expected.size} values`);
  }
});

t.test('texts: as the column decoders write them, one string per value', async (t) => {
  for (const x of [0, 1, -1, 42, 2 ** 31, -(2 ** 40), 2 ** 53 - 1]) t.equal(intText(x), String(x));
  t.equal(ipv4Dotted(0xc0a80101), '192.168.1.1');
  t.equal(ipv4Dotted(0xffffffff), '255.255.255.255');
  t.equal(ipv4Dotted(0), '0.0.0.0');
  const r = rnd(3);
  const made = new Map<number, string>();
  for (let i = 0; i < 200_000; i++) {
    const x = Math.floor(r() * 0x100000000);
    const s = ipv4Text(x);
    if (s !== ipv4Dotted(x)) {
      t.fail(`${x}: ${s}`);
      return;
    }
    if (i < 1000) made.set(x, s);
  }
  // Past the bound new values are not kept; those kept are still served right.
  for (const [x, s] of made) if (ipv4Text(x) !== s) t.fail(`${x}: another text`);
  t.pass('200,000 addresses written right, before and after the bound');
});
