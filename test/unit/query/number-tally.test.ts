/**
 * NumberTally and the number texts (number-tally.ts): distinct values in order of first
 * occurrence with their counts, as a Map would give them, block after block on the reused
 * table (values near the first one by the direct window, the others by the hash); a text column's
 * integers counted from its bytes as from their numbers, and a column that is not all integers'
 * texts refused with the tally left as it was; texts as String() and dotted quads make them,
 * before and after the memo's bound.
 */
import t from 'tap';
import { intText, ipv4Dotted, ipv4Text, NumberTally } from '../../../src/query/number-tally.js';
import { encodeStrings } from '../../../src/segments/columns.js';
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

/** A tally's values and counts, in order. */
function held(tally: NumberTally): [number, number][] {
  const got: [number, number][] = [];
  for (let k = 0; k < tally.size; k++) got.push([tally.value(k), tally.count(k)]);
  return got;
}

t.test('values on both sides of the window and across its edges, reset and kept, some by the hash alone', async (t) => {
  const r = rnd(17);
  const tally = new NumberTally();
  for (let round = 0; round < 200; round++) {
    // Around the first value: inside the window (1 << 14 wide), at its edges, far off, negative.
    const first = Math.floor((r() - 0.5) * 2 ** (round % 2 === 0 ? 20 : 52));
    const near = [0, 1, -1, 4095, -4096, -4097, 12287, 12288, 12289, 2 ** 20, -(2 ** 33)];
    const values = [first, ...Array.from({ length: Math.floor(r() * 3000) }, () => first + (r() < 0.5 ? near[Math.floor(r() * near.length)]! : Math.floor((r() - 0.5) * 40000)))];
    const expected = new Map<number, number>();
    if (round % 3 === 0) tally.reset(values.length);
    else if (round % 3 === 1) {
      tally.reset(0);
      tally.reserve(values.length);
    } else {
      tally.reset(1);
      for (const part of [values.slice(0, 100), values.slice(100)]) {
        tally.reserve(part.length);
        for (const x of part) tally.add(x);
      }
    }
    // Some rounds mix in values counted by the hash alone (addSpread, IPv4 addresses), the first
    // value by either.
    const spread = round % 4 === 3;
    const odd = round % 8 === 3 ? 0 : 1;
    if (round % 3 !== 2) values.forEach((x, i) => (spread && i % 2 === odd ? tally.addSpread(x) : tally.add(x)));
    for (const x of values) expected.set(x, (expected.get(x) ?? 0) + 1);
    if (JSON.stringify(held(tally)) !== JSON.stringify([...expected])) {
      t.fail(`round ${round}: ${tally.size} values, expected ${expected.size}`);
      return;
    }
  }
  t.pass('200 rounds tallied as a Map tallies them');
});

t.test('blocks added as value-count pairs or by selected rows of 32-bit values equal their values added one by one', async (t) => {
  const r = rnd(19);
  const NO = -(2 ** 31);
  for (let round = 0; round < 120; round++) {
    // 32-bit values around a first one (inside the window, at its edges, far off), some rows NO (no value).
    const first = Math.floor((r() - 0.5) * 2 ** 31);
    const one = new NumberTally();
    const pairs = new NumberTally();
    const rows = new NumberTally();
    one.reset(round % 2);
    pairs.reset(round % 2);
    rows.reset(round % 2);
    for (let b = 0; b < 1 + Math.floor(r() * 8); b++) {
      const n = Math.floor(r() * 1500);
      const near = [0, 1, -1, 4095, -4096, -4097, 12287, 12288, 12289, 2 ** 20, -(2 ** 29)];
      const values = Int32Array.from({ length: n }, () => (r() < 0.05 ? NO : (first + (r() < 0.3 ? near[Math.floor(r() * near.length)]! : Math.floor((r() - 0.5) * 8000))) | 0));
      const sel = Int32Array.from(Array.from({ length: n }, (_, i) => i).filter(() => round % 3 === 0 || r() < 0.6));
      one.reserve(n);
      pairs.reserve(n);
      rows.reserve(n);
      // The block's distinct values with their counts, in order of first occurrence (as kept-ints.ts makes them).
      const counts = new Map<number, number>();
      for (const i of sel) {
        const x = values[i]!;
        if (x === NO) continue;
        one.add(x);
        counts.set(x, (counts.get(x) ?? 0) + 1);
      }
      pairs.addPairs(Int32Array.from([...counts].flat()));
      rows.addInts(values, sel, sel.length, NO);
    }
    if (JSON.stringify(held(pairs)) !== JSON.stringify(held(one)) || JSON.stringify(held(rows)) !== JSON.stringify(held(one))) {
      t.fail(`round ${round}: ${pairs.size} / ${rows.size} values, expected ${one.size}`);
      return;
    }
  }
  t.pass('120 rounds of blocks added by pairs and by rows as one by one');
});

t.test('a text column counted from its bytes: as its integers, or refused and the tally as it was', async (t) => {
  const r = rnd(19);
  const odd = ['007', '-0', '1e3', '12a', '', '-', ' 1', '+1', '1234567890123456', 'x'.repeat(200), '١٢', '12.5'];
  let counted = 0;
  let refused = 0;
  let undone = 0;
  for (let round = 0; round < 120; round++) {
    const tally = new NumberTally();
    const expected = new Map<number, number>();
    const spread = [50, 5000, 10 ** 9, 2 ** 52][round % 4]!;
    const offset = Math.floor((r() - 0.5) * 2 * spread);
    for (let block = 0; block < 1 + Math.floor(r() * 8); block++) {
      const n = 1 + Math.floor(r() * 500);
      const values = Array.from({ length: n }, () => {
        const k = r();
        if (k < 0.1) return undefined;
        if (k < 0.13 && round % 2 === 1) return odd[Math.floor(r() * odd.length)]!;
        return String(offset + Math.floor((r() - 0.5) * spread));
      });
      const col = encodeStrings(values, n);
      if (col.e !== 'u') continue;
      // Rows selected: all, about half, or none.
      const sel = new Int32Array(n);
      let count = 0;
      const every = r();
      for (let i = 0; i < n; i++) if (every < 0.4 || (every < 0.9 && r() < 0.5)) sel[count++] = i;
      const picked = Array.from(sel.subarray(0, count), (i) => values[i]);
      // Every row up to the last selected one must hold an integer's text or nothing (their
      // lengths, in UTF-16 units, find the rows).
      const canonical = (v: string | undefined): boolean => v === undefined || (/^-?(0|[1-9][0-9]*)$/.test(v) && v !== '-0' && v.length <= 15 && String(Number(v)) === v);
      const ok = count === 0 || values.slice(0, sel[count - 1]! + 1).every(canonical);
      const before = held(tally);
      tally.reserve(count);
      const got = tally.addTextInts(col.b, col.l, sel, count);
      t.equal(got, ok, `round ${round} block ${block}: ${ok ? 'integers' : 'not all integers'}`);
      if (!ok) {
        refused++;
        if (picked.some((v) => v !== undefined && canonical(v))) undone++;
        t.strictSame(held(tally), before, 'left as it was');
        continue;
      }
      counted++;
      for (const v of picked) if (v !== undefined) expected.set(Number(v), (expected.get(Number(v)) ?? 0) + 1);
      t.strictSame(held(tally), [...expected], `round ${round} block ${block}: counted as their numbers`);
    }
    // The tally still takes values after a refused column.
    tally.reserve(1);
    tally.add(offset);
    expected.set(offset, (expected.get(offset) ?? 0) + 1);
    t.strictSame(held(tally), [...expected], `round ${round}: added to after`);
  }
  t.ok(counted > 100 && refused > 20 && undone > 10, `${counted} columns counted, ${refused} refused (${undone} after some of their rows were counted)`);
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
