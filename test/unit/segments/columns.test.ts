/**
 * Column encodings of block bodies: text columns (`u`) and raw strings as templates over the field
 * columns (`t`), round-tripped over random data, read lazily by the query engine's BlockView the
 * same way, and refused with E_STATE_CORRUPT when damaged.
 */
import t from 'tap';
import { decodeNumbers, decodeStrings, encodeNumbers, encodeStrings, numberRows, selectDeltaRange, textIntValues } from '../../../src/segments/columns.js';
import { decodeRaw, encodeTemplate, type TemplateRaw } from '../../../src/segments/raw-columns.js';
import { decodeBlockEvents, decodeRawAndFields, encodeBlock, encodedBlockAt, readBlockMeta, type BlockBody, type StoredEvent } from '../../../src/segments/block.js';
import { wholeBody } from '../../../src/segments/frames.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { pack } from '../../../src/lib/msgpack.js';
import { BlockView, readInPlace } from '../../../src/query/block-view.js';
import { rawRows, stringRows } from '../../../src/segments/column-rows.js';
import { columnsOf } from './helpers.js';
import { rnd } from '../../helpers/random.js';


t.test('number columns: deltas of every varint length round-trip, and a delta column cut short is refused', async (t) => {
  const r = rnd(19);
  // Magnitudes across the 32-bit fast path's edges (7, 14, 21, 28 bits) and past it, both signs.
  const edges = [0, 1, -1, 63, 64, -64, -65, 8191, 8192, 2 ** 20 - 1, 2 ** 20, 2 ** 27 - 1, 2 ** 27, -(2 ** 27), 2 ** 30, 2 ** 31, -(2 ** 31) - 1, 2 ** 40, 2 ** 50];
  for (let round = 0; round < 200; round++) {
    const n = 1 + Math.floor(r() * 300);
    let x = Math.floor((r() - 0.5) * 2 ** 42);
    const values = Array.from({ length: n }, () => {
      const kind = r();
      x += kind < 0.3 ? Math.floor(r() * 8) : kind < 0.6 ? edges[Math.floor(r() * edges.length)]! * (r() < 0.5 ? 1 : -1) : Math.floor((r() - 0.5) * 2 ** Math.floor(r() * 50));
      return x;
    });
    const col = encodeNumbers(values);
    t.strictSame(decodeNumbers(col, n), values, `round ${round} (${col.e})`);
    // Row by row (numberRows): rows in increasing order with repeats, then any order, as decoded.
    const some = Array.from({ length: 1 + Math.floor(r() * 8) }, () => Math.floor(r() * n)).sort((a, b) => a - b);
    const order = [...some, ...some.map((i) => i).reverse(), Math.floor(r() * n)];
    const one = numberRows(col, n);
    t.strictSame(order.map((i) => one(i)), order.map((i) => values[i]), `round ${round} (${col.e}): rows ${order.join(' ')} one by one`);
    // The rows in a range, read without decoding: those of the decoded values.
    const sorted = [...values].sort((a, b) => a - b);
    const [lo, hi] = [sorted[Math.floor(r() * n)]!, sorted[Math.floor(r() * n)]!].sort((a, b) => a - b) as [number, number];
    const rows = new Int32Array(n);
    const kept = selectDeltaRange(col, n, lo, hi, rows);
    if (col.e !== 'd') t.equal(kept, null, 'only delta columns');
    else t.strictSame([...rows.subarray(0, kept!)], values.flatMap((x, i) => (x >= lo && x <= hi ? [i] : [])), `round ${round}: rows in [${lo}, ${hi}]`);
    if (col.e === 'd' && round % 20 === 0) {
      const cut = { e: 'd' as const, b: col.b.subarray(0, col.b.length - 1) };
      t.throws(() => decodeNumbers(cut, n), { code: 'E_STATE_CORRUPT', message: /ends early/ });
      t.throws(() => selectDeltaRange(cut, n, lo, hi, rows), { code: 'E_STATE_CORRUPT', message: /ends early/ });
      t.throws(() => numberRows(cut, n)(n - 1), { code: 'E_STATE_CORRUPT', message: /ends early/ }, 'row by row: the last row of a column cut short');
    }
  }
  t.strictSame(decodeNumbers(encodeNumbers([1.7e12, 1.7e12 + 3, 1.7e12 + 2 ** 40, 5]), 4), [1.7e12, 1.7e12 + 3, 1.7e12 + 2 ** 40, 5], 'large first value, then small and large jumps both ways');
  // Runs and f64 columns row by row, and their lengths checked as decodeNumbers checks them.
  const runs = encodeNumbers([...Array<number>(8).fill(7), ...Array<number>(8).fill(9), 1, 1, 1, 1]);
  const floats = encodeNumbers([0.5, 1.5, -2.25]);
  t.equal(runs.e, 'r');
  t.equal(floats.e, 'f');
  const runRows = numberRows(runs, 20);
  t.strictSame([19, 0, 8, 8, 7, 16, 15, 19].map((i) => runRows(i)), [1, 7, 9, 9, 7, 1, 9, 1], 'runs, any order');
  t.strictSame([2, 0].map(numberRows(floats, 3)), [-2.25, 0.5], 'f64');
  t.throws(() => numberRows(runs, 21), { code: 'E_STATE_CORRUPT' });
  t.throws(() => numberRows(floats, 4), { code: 'E_STATE_CORRUPT' });
});

t.test('text columns of integers: read as numbers exactly when every value is the canonical text of an integer, into a reused array too', async (t) => {
  const r = rnd(23);
  // The reference: each present value is String(x) of the integer x it reads as.
  const expected = (values: (string | undefined)[]): number[] | null => {
    const out: number[] = [];
    for (const v of values) {
      if (v === undefined) out.push(Number.NaN);
      else if (/^-?(0|[1-9][0-9]*)$/.test(v) && v !== '-0' && v.length <= 15 && String(Number(v)) === v) out.push(Number(v));
      else return null;
    }
    return out;
  };
  const stale = new Float64Array(400).fill(7);
  const odd = ['007', '-0', '1e3', '12a', '', '-', ' 1', '+1', '1234567890123456', 'x'.repeat(200), '١٢'];
  let ints = 0;
  for (let round = 0; round < 300; round++) {
    const n = 1 + Math.floor(r() * 300);
    const values = Array.from({ length: n }, () => {
      const k = r();
      if (k < 0.15) return undefined;
      const digits = 1 + Math.floor(r() * 15);
      const x = Math.floor(r() * 10 ** digits) * (r() < 0.2 ? -1 : 1);
      return round % 3 === 0 && k < 0.17 ? odd[Math.floor(r() * odd.length)]! : String(x);
    });
    // Text columns only (a column of few distinct values is a dictionary).
    if (values.every((v) => v === undefined)) continue;
    const col = encodeStrings(values, n);
    if (col.e !== 'u') continue;
    const want = expected(values);
    if (want !== null) ints++;
    const fresh = textIntValues(col, n);
    t.strictSame(fresh === null ? null : [...fresh], want, `round ${round}`);
    const reused = textIntValues(col, n, stale);
    t.strictSame(reused === null ? null : [...reused.subarray(0, n)], want, `round ${round}, into a reused array`);
    if (reused !== null) t.equal(reused, stale, 'the array given');
  }
  t.ok(ints > 50, `${ints} columns of integers`);
});

t.test('text columns: one UTF-8 run, lengths in UTF-16 units, absent values kept apart from empty ones', async (t) => {
  const values = ['héllo', '', undefined, '日本語🎉', 'x'.repeat(300), null, 'line\nbreak "q"', '🎉'];
  const col = encodeStrings(values, values.length);
  t.equal(col.e, 'u', 'distinct values: a text column');
  t.strictSame(decodeStrings(col, values.length), values.map((v) => v ?? null));
  const lone = encodeStrings(['a\ud800b', 'c\udc00', 'x', 'y'], 4);
  t.strictSame(decodeStrings(lone, 4), ['a\ufffdb', 'c\ufffd', 'x', 'y'], 'a lone surrogate becomes U+FFFD, as in every UTF-8 column, and lengths still line up');
  const short = { ...(col as { e: 'u'; b: Uint8Array; l: Uint8Array }), b: (col as { b: Uint8Array }).b.subarray(0, 5) };
  t.throws(() => decodeStrings(short, values.length), { code: 'E_STATE_CORRUPT' });
  const long = { ...(col as { e: 'u'; b: Uint8Array; l: Uint8Array }), b: Buffer.concat([(col as { b: Uint8Array }).b, Buffer.from('extra')]) };
  t.throws(() => decodeStrings(long, values.length), { code: 'E_STATE_CORRUPT', message: /longer/ });
});

t.test('typed columns: integers and IPv4 addresses in canonical form, every event present', async (t) => {
  const cases: [(string | undefined)[], string][] = [
    [['0', '-5', '123456789012345', '42', '7'], 'i'],
    [['10.0.0.1', '255.255.255.255', '0.0.0.0', '1.2.3.4', '9.9.9.9'], '4'],
    [['01', '2', '3', '4', '5'], 'u'],
    [['-0', '1', '2', '3', '4'], 'u'],
    [['1234567890123456', '1', '2', '3', '4'], 'u'],
    [['1.2.3.04', '1.1.1.1', '1.1.1.2', '1.1.1.3', '1.1.1.4'], 'u'],
    [['256.1.1.1', '1.1.1.1', '1.1.1.2', '1.1.1.3', '1.1.1.4'], 'u'],
    [['1', '2', undefined, '4', '5'], 'u'],
    [['1.1.1.1', '2', '3', '4', '5'], 'u'],
  ];
  for (const [values, e] of cases) {
    const col = encodeStrings(values, values.length);
    t.equal(col.e, e, `${JSON.stringify(values)}: ${e}`);
    t.strictSame(decodeStrings(col, values.length), values.map((v) => v ?? null), 'decodes to the same text');
  }
  t.throws(() => decodeStrings({ e: '4', b: new Uint8Array(7) }, 2), { code: 'E_STATE_CORRUPT' });
});

const ALPHA = ['GET', 'POST', '/api/v1/users', '200', '404', '10.0.0.1', '10.0.0.12', 'curl/8', 'Mozilla/5.0 (X11)', '🎉ok', 'naïve', '-', '', 'a', '12', '1'];
const SEPS = [' ', ' - ', ' "', '" ', '[', '] ', '=', '', '\t', ' ✓ '];

/** Random events whose raw strings are made of field values and separators (some values absent, repeated, or not in the line). */
function randomEvents(r: () => number, n: number, nf = 6): { raw: string[]; fields: (string | undefined)[][] } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const fields: (string | undefined)[][] = Array.from({ length: nf }, () => new Array(n));
  const raw: string[] = [];
  for (let i = 0; i < n; i++) {
    let line = r() < 0.5 ? pick(SEPS) : '';
    for (let j = 0; j < nf; j++) {
      const v = r() < 0.85 ? pick(ALPHA) + (r() < 0.3 ? String(Math.floor(r() * 1000)) : '') : undefined;
      fields[j]![i] = v;
      if (v !== undefined && r() < 0.8) line += v + pick(SEPS);
    }
    if (r() < 0.3) line += pick(ALPHA);
    raw.push(line);
  }
  return { raw, fields };
}

t.test('raw templates round-trip exactly over random lines, whatever the values do', async (t) => {
  const r = rnd(11);
  let templated = 0;
  for (let round = 0; round < 200; round++) {
    const n = 1 + Math.floor(r() * 40);
    const { raw, fields } = randomEvents(r, n);
    const tpl = encodeTemplate(raw, fields, n);
    if (tpl === null) continue;
    templated++;
    const decodedFields = fields.map((f) => decodeStrings(encodeStrings(f, n), n));
    const back = decodeRaw(tpl, n, (j) => decodedFields[j]!);
    if (JSON.stringify(back) !== JSON.stringify(raw)) {
      t.fail(`round ${round}: ${JSON.stringify(raw)} came back as ${JSON.stringify(back)}`);
      return;
    }
  }
  t.ok(templated > 150, `${templated} of 200 random blocks stored as templates, all exact`);
});

t.test('raw templates round-trip with more field columns than fit a 30-bit set (the wide layout cache)', async (t) => {
  const r = rnd(12);
  let templated = 0;
  for (let round = 0; round < 60; round++) {
    const n = 1 + Math.floor(r() * 40);
    const { raw, fields } = randomEvents(r, n, 31 + Math.floor(r() * 40));
    const tpl = encodeTemplate(raw, fields, n);
    if (tpl === null) continue;
    templated++;
    const back = decodeRaw(tpl, n, (j) => fields[j]!);
    if (JSON.stringify(back) !== JSON.stringify(raw)) {
      t.fail(`round ${round}: ${JSON.stringify(raw)} came back as ${JSON.stringify(back)}`);
      return;
    }
  }
  t.ok(templated > 40, `${templated} of 60 wide random blocks stored as templates, all exact`);
});

t.test('templates: events with the same fields reuse a layout, and one that does not fit it gets its own', async (t) => {
  const fields = [
    ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4'],
    ['GET', 'PUT', 'POST', 'GET'],
    ['/a', '/bb', '/ccc', '/dd'],
  ];
  // Event 2 has the same fields as events 0 and 1, in another order in its line; event 3 lacks
  // its method in the line, so the layout cached for its field set cannot place it either.
  const raw = ['10.0.0.1 GET /a', '10.0.0.2 PUT /bb', '/ccc POST 10.0.0.3', '10.0.0.4 /dd'];
  const tpl = encodeTemplate(raw, fields, 4)!;
  t.equal(tpl.e, 't');
  t.strictSame(tpl.t, [[0, 1, 2], [2, 1, 0], [0, 2]], 'one layout per order of the values');
  t.strictSame(decodeStrings({ e: 'i', v: tpl.li }, 4), ['0', '0', '1', '2'], 'events 0 and 1 share the first layout');
  t.strictSame(decodeRaw(tpl, 4, (j) => fields[j]!), raw);
  // A value that occurs again later in the line: the cached layout places it after the cut before.
  const again = encodeTemplate(['ab x ab', 'cd x ab'], [['ab', 'cd'], ['x', 'x']], 2)!;
  t.strictSame(decodeRaw(again, 2, (j) => [['ab', 'cd'], ['x', 'x']][j]!), ['ab x ab', 'cd x ab']);
});

t.test('dictionary columns: one or two bytes per code, absent values, and no dictionary once it cannot pay', async (t) => {
  const n = 2000;
  const narrow = Array.from({ length: n }, (_, i) => (i % 7 === 3 ? undefined : `v${i % 254}`));
  const a = encodeStrings(narrow, n);
  t.match(a, { e: 'k', w: 1 }, '254 distinct values: one byte per code');
  t.strictSame(decodeStrings(a, n), narrow.map((v) => v ?? null));
  const wide = Array.from({ length: n }, (_, i) => (i % 7 === 3 ? null : `v${i % 255}`));
  const b = encodeStrings(wide, n);
  t.match(b, { e: 'k', w: 2 }, '255 distinct values: two bytes per code (255 means absent in one byte)');
  t.strictSame(decodeStrings(b, n), wide);
  const quarter = Array.from({ length: 400 }, (_, i) => `w${i % 100}`);
  t.equal(encodeStrings(quarter, 400).e, 'k', 'a quarter of the events distinct: still a dictionary');
  const over = Array.from({ length: 400 }, (_, i) => `w${i % 101}`);
  const c = encodeStrings(over, 400);
  t.not(c.e, 'k', 'one more distinct value: the dictionary would not pay');
  t.strictSame(decodeStrings(c, 400), over);
});

t.test('templates: surrogate pairs are never cut; too little coverage keeps raw strings whole', async (t) => {
  const raw = ['x🎉y', 'a🎉b'];
  const high = '\ud83c';
  const tpl = encodeTemplate(raw, [[high, high], ['x', 'a']], 2);
  t.equal(tpl, null, 'half a pair is not a reference, and the rest covers too little');
  const ok = encodeTemplate(['x🎉y z', 'a🎉b z'], [['x🎉y', 'a🎉b']], 2)!;
  t.equal(ok.e, 't');
  t.strictSame(decodeRaw(ok, 2, () => ['x🎉y', 'a🎉b']), ['x🎉y z', 'a🎉b z']);
  t.equal(encodeTemplate(['a long line with nothing parsed'], [['zz']], 1), null);
});

/** A block of 1 to 30 random events; every third round's lines end in 20 times `tail` (too little covered for templates). */
function randomBlock(r: () => number, round: number, tail: string): { n: number; raw: string[]; fields: (string | undefined)[][]; events: StoredEvent[]; bytes: Buffer; m: NonNullable<ReturnType<typeof readBlockMeta>> } {
  const n = 1 + Math.floor(r() * 30);
  const { raw: lines, fields } = randomEvents(r, n);
  const raw = round % 3 === 0 ? lines.map((l) => `${l} ${tail.repeat(20)}`) : lines;
  const events: StoredEvent[] = raw.map((rawstring, i) => {
    const f: Record<string, string> = {};
    fields.forEach((col, j) => {
      if (col[i] !== undefined) f[`f${j}`] = col[i]!;
    });
    return { timestamp: 1000 + i, timezone: 'Z', rawstring, fields: f, ingestTimestamp: 5, offset: 64 * i, index: 0 };
  });
  const bytes = encodeBlock(columnsOf(events), lz4Codec);
  return { n, raw, fields, events, bytes, m: readBlockMeta(bytes, 0)! };
}

t.test('blocks: templated and whole raw strings decode to the same events, also lazily through BlockView', async (t) => {
  const r = rnd(5);
  const encodings = new Set<string>();
  const fieldEncodings = new Set<string>();
  for (let round = 0; round < 60; round++) {
    const { n, raw, fields, events, bytes, m } = randomBlock(r, round, 'unparsed text ');
    t.strictSame(decodeBlockEvents(bytes, 0, m, lz4Codec), events, `round ${round}`);
    encodings.add(encodedBlockAt(bytes, 0, m, lz4Codec).encoding('raw'));
    // Lazily: the raw strings first in one view, a field first in another (format 5: each column read from its frame).
    const a = BlockView.fromEncoded(encodedBlockAt(bytes, 0, m, lz4Codec), { repoName: 'r', partition: 0, tags: {} });
    t.strictSame(a.raw(), raw);
    const b = BlockView.fromEncoded(encodedBlockAt(bytes, 0, m, lz4Codec), { repoName: 'r', partition: 0, tags: {} });
    t.strictSame(events.map((_, i) => b.get('f1', i)), fields[1]!.map((v) => v));
    t.strictSame(b.raw(), raw);
    // Row by row (readFew): each row's raw string and fields decoded alone (the rows in random order, some views
    // asked for a field before the raw string) give what the whole columns give.
    const whole = BlockView.fromEncoded(encodedBlockAt(bytes, 0, m, lz4Codec), { repoName: 'r', partition: 0, tags: {} });
    for (let i = 0; i < n; i++) {
      const sparse = BlockView.fromEncoded(encodedBlockAt(bytes, 0, m, lz4Codec), { repoName: 'r', partition: 0, tags: {} });
      sparse.readFew();
      const row = Math.floor(r() * n);
      if (r() < 0.5) t.equal(sparse.get('f2', row), whole.get('f2', row));
      t.equal(sparse.get('@rawstring', row), raw[row], `round ${round}: row ${row}'s raw string alone`);
      t.strictSame(sparse.names(row), whole.names(row));
      for (const name of whole.names(row)) t.equal(sparse.get(name, row), whole.get(name, row), `round ${round}: row ${row}'s ${name} alone`);
    }
    for (let j = 0; j < fields.length; j++) fieldEncodings.add(whole.encoding(`f${j}`) ?? '-');
  }
  t.strictSame([...encodings].sort(), ['j', 't'], 'both raw encodings exercised');
  t.ok(['u', 'x', 'i', '4'].every((e) => fieldEncodings.has(e)), `field encodings exercised sparsely: ${[...fieldEncodings].sort().join(' ')}`);
});

t.test('row by row (column-rows.ts): every encoding gives each row what the whole column decodes to', async (t) => {
  const r = rnd(23);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const kinds = new Set<string>();
  const rows = (n: number): number[] => Array.from({ length: n }, (_, i) => i).sort(() => r() - 0.5);
  for (let round = 0; round < 150; round++) {
    const n = 1 + Math.floor(r() * 60);
    const kind = round % 6;
    const values: (string | undefined)[] = Array.from({ length: n }, (_, i) => {
      if (kind === 0) return pick(['GET', 'POST', undefined, 'é']);
      if (kind === 1) return r() < 0.1 ? undefined : `${pick(['日本', 'x', '🎉', 'a\ud800'])}${i}${'z'.repeat(Math.floor(r() * 5))}`;
      if (kind === 2) return r() < 0.1 ? undefined : `value ${i} ${Math.floor(r() * 1e6)}`;
      if (kind === 3) return String(Math.floor((r() - 0.5) * 2 ** 40));
      if (kind === 4) return `${i % 256}.${Math.floor(r() * 256)}.0.${Math.floor(r() * 256)}`;
      return String(i);
    });
    const col = kind === 5 ? { e: 's' as const, v: values.map((v) => v ?? null) } : encodeStrings(values, n);
    kinds.add(col.e);
    const whole = decodeStrings(col, n);
    const one = stringRows(col, n);
    for (const i of rows(n)) if (one(i) !== whole[i]) t.fail(`round ${round} (${col.e}) row ${i}: ${one(i)} against ${whole[i]}`);
  }
  t.strictSame([...kinds].sort(), ['4', 'i', 'k', 's', 'u'], 'every encoding that stands alone exercised');
  // References into the raw strings, and both raw encodings, through blocks of random events.
  const raws = new Set<string>();
  let refs = 0;
  for (let round = 0; round < 60; round++) {
    const { n, bytes, m } = randomBlock(r, round, 'unparsed tail é ');
    const body = wholeBody(encodedBlockAt(bytes, 0, m, lz4Codec));
    raws.add(body.raw.e);
    const { raw: wholeRaw, fields: wholeFields } = decodeRawAndFields(body);
    const rawOne = rawRows(body.raw, n, (j) => stringRows(body.fields[j]![1], n));
    const fieldOne = body.fields.map(([, c]) => {
      if (c.e === 'x') refs++;
      return stringRows(c, n, rawOne);
    });
    const order = rows(n);
    t.strictSame(order.map(rawOne), order.map((i) => wholeRaw[i]), `round ${round}: raw strings`);
    t.strictSame(order.map((i) => fieldOne.map((f) => f(i))), order.map((i) => wholeFields.map((f) => f[i])), `round ${round}: fields`);
    // A view reading few rows gives what a view decoding whole columns gives, names and values.
    const few = BlockView.fromEncoded(encodedBlockAt(bytes, 0, m, lz4Codec), { repoName: 'r', partition: 0, tags: {} });
    few.readFew();
    const all = BlockView.fromEncoded(encodedBlockAt(bytes, 0, m, lz4Codec), { repoName: 'r', partition: 0, tags: {} });
    const some = rows(n).slice(0, 3);
    const shown = (v: BlockView): unknown => some.map((i) => v.names(i).map((x) => [x, v.get(x, i)]));
    t.strictSame(shown(few), shown(all), `round ${round}: a few rows read row by row`);
  }
  t.strictSame([...raws].sort(), ['j', 't'], 'both raw encodings exercised');
  t.ok(refs > 0, 'reference columns exercised');
  // Dictionaries of more entries than a head summarises (their msgpack is in the frame), one and
  // two bytes wide, some rows without the field: read in place row by row.
  for (const [n, distinct] of [[400, 90], [1200, 290]] as const) {
    const events: StoredEvent[] = Array.from({ length: n }, (_, i) => {
      const f: Record<string, string> = { path: `/p/${(i * 7919) % distinct}` };
      if (i % 5 !== 0) f.user = `u${i % distinct}é`;
      return { timestamp: 1000 + i, timezone: 'Z', rawstring: `GET ${f.path} by ${f.user ?? '-'} ${i}`, fields: f, ingestTimestamp: 5, offset: 64 * i, index: 0 };
    });
    const bytes = encodeBlock(columnsOf(events), lz4Codec);
    const m = readBlockMeta(bytes, 0)!;
    const few = BlockView.fromEncoded(encodedBlockAt(bytes, 0, m, lz4Codec), { repoName: 'r', partition: 0, tags: {} });
    few.readFew();
    const all = BlockView.fromEncoded(encodedBlockAt(bytes, 0, m, lz4Codec), { repoName: 'r', partition: 0, tags: {} });
    const some = rows(n).slice(0, 25);
    const shown = (v: BlockView): unknown => some.map((i) => v.names(i).map((x) => [x, v.get(x, i)]));
    t.strictSame(shown(few), shown(all), `${n} events, ${distinct} values: a few rows read row by row`);
    t.strictSame(some.map((i) => few.get('user', i) ?? null), some.map((i) => events[i]!.fields.user ?? null), `${n} events: the values sent`);
  }
  t.ok(readInPlace.dicts > 0 && readInPlace.templates > 0, `dictionaries and templates read in place: ${JSON.stringify(readInPlace)}`);
  // Damage: lengths past the run, a template without its layout.
  const text = encodeStrings(['ab', 'cd', 'ef'], 3) as { e: 'u'; b: Uint8Array; l: Uint8Array };
  t.throws(() => stringRows({ ...text, b: text.b.subarray(0, 4) }, 3), { code: 'E_STATE_CORRUPT' });
  t.throws(() => stringRows({ ...text, b: Buffer.concat([text.b, Buffer.from('x')]) }, 3), { code: 'E_STATE_CORRUPT', message: /longer/ });
  t.throws(() => stringRows({ e: 'k', d: ['a'], i: new Uint8Array(2), w: 1 }, 3), { code: 'E_STATE_CORRUPT' });
  const tplRows = rawRows({ e: 't', t: [[0]], li: encodeNumbers([0, 7]), g: [encodeStrings(['<', '<'], 2), encodeStrings(['>', '>'], 2)] }, 2, () => () => 'v');
  t.equal(tplRows(0), '<v>');
  t.throws(() => tplRows(1), { code: 'E_STATE_CORRUPT', message: /no layout 7/ });
});

t.test('damaged templates are E_STATE_CORRUPT, not wrong events', async (t) => {
  const events: StoredEvent[] = Array.from({ length: 4 }, (_, i) => ({
    timestamp: i,
    timezone: 'Z',
    rawstring: `10.0.0.${i} GET /api/item/${i} 200`,
    fields: { client: `10.0.0.${i}`, method: 'GET', url: `/api/item/${i}`, status: '200' },
    ingestTimestamp: 0,
    offset: i,
    index: 0,
  }));
  const bytes = encodeBlock(columnsOf(events), lz4Codec);
  const m = readBlockMeta(bytes, 0)!;
  const body = wholeBody(encodedBlockAt(bytes, 0, m, lz4Codec));
  t.equal(body.raw.e, 't');
  const tpl = body.raw as TemplateRaw;
  t.throws(() => decodeRawAndFields({ ...body, raw: { ...tpl, li: encodeNumbers([0, 0, 0, 9]) } }), { code: 'E_STATE_CORRUPT', message: /no layout 9/ });
  t.throws(() => decodeRawAndFields({ ...body, raw: { ...tpl, t: tpl.t.map((l) => l.map(() => 40)) } }), { code: 'E_STATE_CORRUPT', message: /field column 40/ });
  t.throws(() => decodeRawAndFields({ ...body, raw: { ...tpl, g: tpl.g.slice(0, 1) } }), { code: 'E_STATE_CORRUPT' });
  const withRef: BlockBody = { ...body, fields: body.fields.map(([name, col], j) => (j === 0 ? [name, { e: 'x', p: new Uint8Array([0, 0, 0, 0]), v: [] }] : [name, col])) };
  t.throws(() => decodeRawAndFields(withRef), { code: 'E_STATE_CORRUPT', message: /refers to raw strings/ });
  const view = BlockView.fromBody(Buffer.from(pack(withRef)), { repoName: 'r', partition: 0, tags: {} });
  t.throws(() => view.raw(), { code: 'E_STATE_CORRUPT' });
});

