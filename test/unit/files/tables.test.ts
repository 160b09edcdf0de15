import t from 'tap';
import { parseTable, packTable, viewsOf, cellValue, checkFileName, runPackTask } from '../../../src/files/index.js';
import { cellLimit, MAX_CELLS, MIN_CELL_ALLOWANCE } from '../../../src/files/parse.js';
import { cidrFinder, exactFinder, globFinder } from '../../../src/files/lookup-index.js';
import { LogsvcError } from '../../../src/lib/errors.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const table = (text: string, kind: 'csv' | 'json' = 'csv', maxRows = 1000) => packTable(`h-${text.length}-${kind}-${text.slice(0, 20)}`, kind, parseTable(enc(text), kind, { maxRows }));
const refused = (fn: () => unknown, re: RegExp) => {
  try {
    fn();
  } catch (err) {
    return err instanceof LogsvcError && err.code === 'E_VALIDATION' && re.test(err.message);
  }
  return false;
};

t.test('CSV as the product reads it', async (t) => {
  const p = parseTable(enc('\uFEFFa, b ,c\n1," x, y ",""\n\n2,"say ""hi""",z\n'), 'csv', { maxRows: 10 });
  t.strictSame(p.columns, ['a', ' b ', 'c'], 'BOM dropped, whitespace in names kept');
  t.strictSame(p.rows, [['1', ' x, y ', ''], ['2', 'say "hi"', 'z']], 'quoting, doubled quotes, empty lines skipped');
  t.strictSame(parseTable(enc('a,b\r\n1,2\r\n'), 'csv', { maxRows: 10 }).rows, [['1', '2']], 'CRLF lines');
  t.ok(refused(() => parseTable(enc(''), 'csv', { maxRows: 10 }), /empty/));
  t.ok(refused(() => parseTable(enc('a,a\n1,2\n'), 'csv', { maxRows: 10 }), /twice/));
  t.ok(refused(() => parseTable(enc('a,b\n1\n'), 'csv', { maxRows: 10 }), /CSV/));
  t.ok(refused(() => parseTable(enc('a\n1\n2\n3\n'), 'csv', { maxRows: 2 }), /max_rows/));
  t.ok(refused(() => parseTable(enc('a\n"open\n'), 'csv', { maxRows: 2 }), /CSV/));
});

t.test('JSON: keyed object and array of objects', async (t) => {
  const keyed = parseTable(enc('{"k1":{"a":"x","n":5},"k2":{"b":true}}'), 'json', { maxRows: 10 });
  t.strictSame(keyed.columns, ['', 'a', 'n', 'b']);
  t.equal(keyed.keyColumn, 0);
  t.strictSame(keyed.rows, [['k1', 'x', '5'], ['k2', null, null, 'true']], 'rows end at their last member');
  const arr = parseTable(enc('[{"id":"1","name":"a"},{"id":"2","extra":"e"}]'), 'json', { maxRows: 10 });
  t.strictSame(arr.columns, ['id', 'name', 'extra']);
  t.strictSame(arr.rows, [['1', 'a'], ['2', null, 'e']]);
  const packed = packTable('short-rows', 'json', arr);
  t.equal(cellValue(viewsOf(packed), 0, 2), undefined, 'cells past the end of a shorter row are absent');
  t.equal(cellValue(viewsOf(packed), 1, 2), 'e');
  t.ok(refused(() => parseTable(enc('[{"a":[1]}]'), 'json', { maxRows: 10 }), /nest/));
  t.ok(refused(() => parseTable(enc('"x"'), 'json', { maxRows: 10 }), /object keyed/));
  t.ok(refused(() => parseTable(enc('[1]'), 'json', { maxRows: 10 }), /object of fields/));
  t.ok(refused(() => parseTable(enc('[{},{},{}]'), 'json', { maxRows: 2 }), /max_rows/));
});

t.test('the cell bound: sparse JSON files are refused before padding or packing', async (t) => {
  const tooLarge = (fn: () => unknown): string => {
    try {
      fn();
    } catch (err) {
      return err instanceof LogsvcError ? `${err.code}: ${err.message}` : `other: ${String(err)}`;
    }
    return 'accepted';
  };
  // The review's case: 1,000 one-member objects then 4,000 empty ones (24 KB, 5 million cells).
  const rows = [...Array.from({ length: 1000 }, (_, i) => ({ [`m${i}`]: 'v' })), ...Array.from({ length: 4000 }, () => ({}))];
  const text = JSON.stringify(rows);
  t.ok(text.length < 25_000);
  const heapBefore = process.memoryUsage().heapUsed;
  t.match(tooLarge(() => parseTable(enc(text), 'json', { maxRows: 1_000_000 })), /^E_BODY_TOO_LARGE: the file has 5000 rows of 1000 columns \(5000000 cells\)/);
  t.ok(process.memoryUsage().heapUsed - heapBefore < 20 * 1024 * 1024, 'refused without building the dense table');
  // (999 members: the unnamed key column is the thousandth.)
  const keyed = JSON.stringify(Object.fromEntries(rows.slice(1).map((r, i) => [`k${i}`, r])));
  t.match(tooLarge(() => parseTable(enc(keyed), 'json', { maxRows: 1_000_000 })), /^E_BODY_TOO_LARGE: .*cells/, 'keyed objects too');
  t.equal(cellLimit(100), MIN_CELL_ALLOWANCE, 'small files get the floor');
  t.equal(cellLimit(10_000_000), 40_000_000, 'four cells per byte');
  t.equal(cellLimit(1e12), MAX_CELLS, 'never more than the cap');
  // A sparse file within the bound still reads (200 rows x 200 members = 40,000 cells).
  const fine = Array.from({ length: 200 }, (_, i) => ({ [`m${i}`]: String(i) }));
  const p = parseTable(enc(JSON.stringify(fine)), 'json', { maxRows: 1000 });
  t.equal(p.columns.length, 200);
  t.equal(cellValue(viewsOf(packTable('fine', 'json', p)), 199, 199), '199');
  t.equal(cellValue(viewsOf(packTable('fine', 'json', p)), 0, 199), undefined);
  t.equal((await runPackTask({ source: { bytes: enc(text) }, kind: 'json', hash: 'x', maxRows: 1_000_000 })).ok, false, 'the pool task reports it as data');
  t.match(await runPackTask({ source: { bytes: enc(text) }, kind: 'json', hash: 'x', maxRows: 1_000_000 }), { ok: false, code: 'E_BODY_TOO_LARGE' });
});

t.test('packing: one byte per unit when possible, UTF-16 otherwise, absent cells', async (t) => {
  const narrow = table('k,v\nä,1\nb,\n');
  t.equal(narrow.wide, false);
  const v = viewsOf(narrow);
  t.equal(cellValue(v, 0, 0), 'ä');
  t.equal(cellValue(v, 1, 1), '');
  const wide = table('k,v\n日本,😀\n');
  t.equal(wide.wide, true);
  t.equal(cellValue(viewsOf(wide), 0, 1), '😀');
  const arr = packTable('arr', 'json', parseTable(enc('[{"a":"1"},{"b":"2"}]'), 'json', { maxRows: 10 }));
  t.equal(cellValue(viewsOf(arr), 0, 1), undefined, 'a missing member stays missing');
  const long = 'x'.repeat(20_000);
  t.equal(cellValue(viewsOf(table(`a\n${long}\n`)), 0, 0), long, 'long cells are read in chunks');
});

t.test('exact finder: duplicates in file order, ignoreCase, composite keys, absent keys', async (t) => {
  const tb = table('id,name,n\n1,Ada,a\n2,Bob,b\n1,Ada,c\n3,ADA,d\n');
  const byId = exactFinder(tb, [0], false);
  t.strictSame(byId(['1'], 5), [2, 0], 'the latest rows, newest first');
  t.strictSame(byId(['1'], 1), [2], 'one row: the last matching one');
  t.strictSame(byId(['9'], 5), []);
  t.strictSame(byId([''], 5), []);
  t.strictSame(exactFinder(tb, [1], true)(['ada'], 5), [3, 2, 0]);
  t.strictSame(exactFinder(tb, [1], false)(['ada'], 5), []);
  t.strictSame(exactFinder(tb, [0, 1], false)(['1', 'Ada'], 5), [2, 0]);
  t.strictSame(exactFinder(tb, [0, 1], false)(['1', 'Bob'], 5), []);
  const arr = packTable('arr2', 'json', parseTable(enc('[{"k":"x"},{"other":"y"},{"k":"x"}]'), 'json', { maxRows: 10 }));
  t.strictSame(exactFinder(arr, [0], false)(['x'], 5), [2, 0], 'rows without the key member are not indexed');
  // Many rows, many collisions: every key still found.
  const many = table(`k\n${Array.from({ length: 5000 }, (_, i) => `key${i % 2500}`).join('\n')}\n`, 'csv', 10_000);
  const f = exactFinder(many, [0], false);
  let ok = true;
  for (let i = 0; i < 2500; i++) ok &&= f([`key${i}`], 3).join() === `${i + 2500},${i}`;
  t.ok(ok, '2,500 keys with two rows each');
});

t.test('glob and cidr finders', async (t) => {
  const g = table('p,kind\n*/login*,auth\n/static/*,asset\n*,any\n');
  // Ordered by pattern text: "*" < "*/login*" < "/static/*".
  t.strictSame(globFinder(g, 0, false)(['/a/login?x'], 5), [2, 0]);
  t.strictSame(globFinder(g, 0, false)(['/a/login?x'], 1), [2]);
  t.strictSame(globFinder(g, 0, false)(['/STATIC/x'], 5), [2]);
  t.strictSame(globFinder(g, 0, true)(['/STATIC/x'], 5), [2, 1]);
  t.strictSame(globFinder(g, 0, false)(['x/static/y'], 5), [2], 'patterns are anchored');
  const same = table('p,kind\n*.php,old\n*.php,new\n');
  t.strictSame(globFinder(same, 0, false)(['a.php'], 5), [1, 0], 'equal patterns: latest row first');
  const c = table('net,z\n10.0.0.0/8,a\nbad,b\n10.1.0.0/16,c\n10.1.2.3,d\n2001:db8::/32,e\n0.0.0.0/0,f\n');
  const f = cidrFinder(c, 0);
  t.strictSame(f(['10.1.2.3'], 10), [3, 2, 0, 5], 'most specific subnet first');
  t.strictSame(f(['10.1.2.3'], 2), [3, 2]);
  t.strictSame(f(['10.1.9.9'], 1), [2], 'nrows=1: the most specific subnet');
  const twice = table('net,z\n10.0.0.0/8,old\n10.0.0.0/8,new\n');
  t.strictSame(cidrFinder(twice, 0)(['10.2.3.4'], 5), [1, 0], 'equal subnets: latest row first');
  t.strictSame(f(['11.0.0.1'], 10), [5]);
  t.strictSame(f(['2001:db8:1::9'], 10), [4]);
  t.strictSame(f(['not an ip'], 10), []);
});

t.test('file names', async (t) => {
  t.equal(checkFileName('users.csv'), 'csv');
  t.equal(checkFileName('Hosts.JSON'), 'json');
  for (const bad of ['', '../a.csv', 'a/b.csv', 'a\\b.csv', '..', '.', 'a.txt', 'x\u0000.csv', `${'a'.repeat(300)}.csv`]) {
    t.throws(() => checkFileName(bad), { code: 'E_VALIDATION' }, JSON.stringify(bad.slice(0, 20)));
  }
});
