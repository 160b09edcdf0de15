/**
 * JSON lookup files packed in streaming passes (packJson, issue 24): the same table as the whole-
 * document reader, and every bound (nesting, columns, rows, cells) refused as soon as it is passed:
 * a file whose first row passes a bound is refused without reading the rest of the file.
 */
import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseTable, packTable, viewsOf, cellValue } from '../../../src/files/index.js';
import { packJson, type PackedTable } from '../../../src/files/packed.js';
import { JsonRows } from '../../../src/files/parse.js';
import { LogsvcError } from '../../../src/lib/errors.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's full garbage collection, exposed for this process (no --expose-gc flag needed). */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const cells = (p: PackedTable): (string | undefined)[][] => {
  const v = viewsOf(p);
  return Array.from({ length: p.nRows }, (_, r) => p.columns.map((_, c) => cellValue(v, r, c)));
};
const failure = async (run: () => Promise<unknown>): Promise<string> => {
  try {
    await run();
    return 'accepted';
  } catch (err) {
    return err instanceof LogsvcError ? `${err.code}: ${err.message}` : `other: ${String(err)}`;
  }
};

t.test('streamed JSON packs to the same table as the whole-document reader, from memory and from disk', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'logsvc-json-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const docs = [
    '{"k1":{"a":"x","n":5},"k2":{"b":true},"k3":{"a":null}}',
    '\uFEFF[{"id":"1","name":"ä"},{"id":"2","extra":"e"},{}]',
    '[{"2":"two","1":"one","b":"b"}]',
    '{}',
    '[]',
    // Strings and numbers cut across chunk boundaries (the reader is pushed a megabyte at a time).
    JSON.stringify(Array.from({ length: 30_000 }, (_, i) => ({ k: `key-${i}`, v: i * 1.5, s: 'é'.repeat(i % 7) }))),
  ];
  for (const [i, doc] of docs.entries()) {
    const bytes = enc(doc);
    const whole = packTable(`h${i}`, 'json', parseTable(bytes, 'json', { maxRows: 100_000 }));
    const mem = await packJson(`h${i}`, bytes, bytes.byteLength, { maxRows: 100_000 });
    const path = join(dir, `${i}.json`);
    await writeFile(path, bytes);
    const disk = await packJson(`h${i}`, { path }, bytes.byteLength, { maxRows: 100_000 });
    for (const [how, p] of [['memory', mem], ['disk', disk]] as const) {
      t.strictSame(p.columns, whole.columns, `${i} ${how}: columns`);
      t.equal(p.keyColumn, whole.keyColumn, `${i} ${how}: key column`);
      t.equal(p.wide, whole.wide, `${i} ${how}: wide`);
      t.strictSame(cells(p), cells(whole), `${i} ${how}: cells`);
    }
  }
  const keyed = await packJson('k', enc('{"k1":{"a":"x","n":5},"k2":{"b":true}}'), 40, { maxRows: 10 });
  t.strictSame(keyed.columns, ['', 'a', 'n', 'b']);
  t.strictSame(cells(keyed), [['k1', 'x', '5', undefined], ['k2', undefined, undefined, 'true']]);
});

t.test('every bound is refused where it is passed, before the rest of the file is read', async (t) => {
  // What follows the offending row is not JSON at all: a reader that went on would report that instead.
  const junk = ' this is not json '.repeat(1000);
  const at = (doc: string): Uint8Array => enc(doc + junk);
  const limits = { maxRows: 3 };
  t.match(await failure(() => packJson('n', at('[{"a":{"b":1}},'), 1e6, limits)), /^E_VALIDATION: the JSON file nests too deeply at byte 6/);
  t.match(await failure(() => packJson('n', at(`[${'['.repeat(100_000)}`), 1e6, limits)), /^E_VALIDATION: the JSON file nests too deeply at byte 2/, '100,000 deep: refused at the third');
  t.match(await failure(() => packJson('r', at('[{},{},{},{},'), 1e6, limits)), /^E_VALIDATION: the file has 4 or more rows, more than the limit of 3 \(files.max_rows\)/);
  const wide = JSON.stringify(Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`m${i}`, 'v'])));
  t.match(await failure(() => packJson('c', at(`[${wide},`), 1e6, limits)), /^E_VALIDATION: the file has more than 1000 distinct members/);
  t.match(await failure(() => packJson('e', at('[{"":"x"},'), 1e6, limits)), /^E_VALIDATION: \[0\]: a member has an empty name/);
  t.match(await failure(() => packJson('o', at('[1,'), 1e6, limits)), /^E_VALIDATION: \[0\]: must be an object of fields/);
  t.match(await failure(() => packJson('s', enc('"x"'), 3, limits)), /^E_VALIDATION: the JSON file must be an object keyed by lookup value, or an array of objects/);
  t.match(await failure(() => packJson('z', enc(''), 0, limits)), /^E_VALIDATION: the JSON file must be an object/);
  t.match(await failure(() => packJson('t', enc('[{"a":"x"}'), 10, limits)), /^E_VALIDATION: the JSON file is not valid JSON/, 'cut short');
  t.match(await failure(() => packJson('g', enc('[{"a":"x"}] x'), 13, limits)), /^E_VALIDATION: the JSON file is not valid JSON/, 'trailing garbage');
  // Cells: 1,000 one-member rows and then empty ones, in a file that says it is small.
  const sparse = `[${Array.from({ length: 1000 }, (_, i) => `{"m${i}":"v"}`).join(',')},${'{},'.repeat(2000)}`;
  t.match(await failure(() => packJson('x', at(sparse), 1000, { maxRows: 1_000_000 })), /^E_BODY_TOO_LARGE: the file has 1049 rows of 1000 columns/);
});

t.test('the reader keeps no emitted row', async (t) => {
  let n = 0;
  const r = new JsonRows(() => void n++);
  const row = enc(`${JSON.stringify({ a: 'x'.repeat(1000), b: 1 })},`);
  r.write(enc('['));
  // Heap measured after a full collection: what the reader retains, not garbage a busy machine
  // has not collected yet (a full-suite run read 16.4 MB of uncollected garbage once).
  const gc = collector();
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < 20_000; i++) r.write(row);
  r.write(enc('{}]'));
  r.end();
  t.equal(n, 20_001);
  gc();
  t.ok(process.memoryUsage().heapUsed - before < 15 * 1024 * 1024, `20 MB of rows read with ${((process.memoryUsage().heapUsed - before) / 1e6).toFixed(1)} MB more heap`);
});
