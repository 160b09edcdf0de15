import t from 'tap';
import { kvPairs } from '../../../src/query/functions/parsing.js';
import { col, ev, rowsOf, run, type Fields } from './driver.js';

function one(q: string, e: Fields): Fields | undefined {
  return rowsOf(q, [e])[0];
}

t.test('regex(): named groups, field, strict, repeat, flags, limit, negation', async (t) => {
  const e = ev('took=12ms user=Alice took=7ms', { msg: 'ERROR disk full' });
  t.strictSame(one('regex("took=(?<took>\\\\d+)ms")', e)?.['took'], '12');
  t.strictSame(one('regex("^(?<level>[A-Z]+)", field=msg)', e)?.['level'], 'ERROR');
  t.equal(one('regex("nomatch(?<x>.)")', e), undefined, 'strict: dropped');
  t.equal(one('regex("nomatch(?<x>.)", strict=false)', e)?.['@rawstring'], e['@rawstring'], 'not strict: kept unchanged');
  t.strictSame(one('regex("user=(?<u>alice)", flags=i)', e)?.['u'], 'Alice');
  t.strictSame(one('regex(/user=(?<u>alice)/i)', e)?.['u'], 'Alice');
  const rep = rowsOf('regex("took=(?<took>\\\\d+)ms", repeat=true)', [e]);
  t.strictSame(col(rep, 'took').sort(), ['12', '7'], 'one event per match');
  t.strictSame(col(rowsOf('regex("took=(?<took>\\\\d+)ms", repeat=true, limit=1)', [e]), 'took'), ['12']);
  t.strictSame(col(rowsOf('regex(/took=(?<took>\\d+)ms/g)', [e]), 'took').sort(), ['12', '7'], 'the g flag repeats');
  t.equal(rowsOf('!regex("disk", field=msg)', [e]).length, 0);
  t.equal(rowsOf('not regex("tape", field=msg)', [e]).length, 1);
  t.throws(() => run('regex("(a)\\\\1")', [e]), { code: 'E_QUERY', message: /linear time/ });
  t.throws(() => run('regex("(?<x>a", field=msg)', [e]), { code: 'E_QUERY', message: /invalid regex/ });
});

t.test('replace(): all matches, with/replacement, as, group references, flags', async (t) => {
  const e = ev('a1b22c333', { f: 'Hello hello' });
  t.equal(one('replace("\\\\d+", with="#")', e)?.['@rawstring'], 'a#b#c#');
  t.equal(one('replace("\\\\d", replacement="", as=clean)', e)?.['clean'], 'abc');
  t.equal(one('replace("hello", with="bye", field=f, flags=i)', e)?.['f'], 'bye bye');
  t.equal(one('replace("(?<w>h)ello", with="${w}i", field=f, as=g)', e)?.['g'], 'Hello hi');
  t.equal(one('replace("(\\\\w+) (\\\\w+)", with="$2 $1", field=f, as=g)', e)?.['g'], 'hello Hello');
});

t.test('parseJson(): flattening, prefix, include/exclude, excludeEmpty, handleNull, invalid', async (t) => {
  const json = '{"a":{"b":1,"c":[10,{"d":"x"}]},"s":"str","e":"","n":null,"t":true}';
  const r = one('parseJson()', ev(json))!;
  t.equal(r['a.b'], '1');
  t.equal(r['a.c[0]'], '10');
  t.equal(r['a.c[1].d'], 'x');
  t.equal(r['s'], 'str');
  t.equal(r['e'], '');
  t.equal(r['n'], 'null');
  t.equal(r['t'], 'true');
  t.equal(one('parseJson(prefix="j.")', ev(json))!['j.s'], 'str');
  const inc = one('parseJson(include=[a])', ev(json))!;
  t.equal(inc['a.b'], '1');
  t.equal(inc['s'], undefined);
  const exc = one('parseJson(exclude=["a.c"])', ev(json))!;
  t.equal(exc['a.b'], '1');
  t.equal(exc['a.c[0]'], undefined);
  t.equal(one('parseJson(excludeEmpty=true)', ev(json))!['e'], undefined);
  t.equal(one('parseJson(handleNull=discard)', ev(json))!['n'], undefined);
  t.equal(one('parseJson(handleNull=empty)', ev(json))!['n'], '');
  t.equal(one('parseJson(field=body)', ev('x', { body: '{"k":"v"}' }))!['k'], 'v');
  const bad = one('parseJson()', ev('{not json'))!;
  t.equal(bad['@rawstring'], '{not json', 'invalid JSON passes unchanged');
  t.equal(one('parseJson()', ev('[{"x":1},{"x":2}]'))!['[1].x'], '2', 'a top-level array');
  t.equal(one('parseJson()', ev(' \n\t{"x":1}'))!['x'], '1', 'white space before the object');
  for (const scalar of ['"str"', '123', 'true', 'null', '', 'x {"a":1}']) {
    t.strictSame(Object.keys(one('parseJson()', ev(scalar))!).sort(), Object.keys(ev(scalar)).sort(), `${JSON.stringify(scalar)}: no fields (only an object or an array gives fields)`);
  }
  t.equal(one('parseJson() | split(field="")', ev('[{"x":1}]'))?.['x'], '1');
});

t.test('kvParse(): forms, prefix, override, separator, excludeEmpty', async (t) => {
  t.strictSame(kvPairs('a=1 b="two words" c=\'q\' d = 4, e=5;f=', '=', true), [
    ['a', '1'],
    ['b', 'two words'],
    ['c', 'q'],
    ['d', '4'],
    ['e', '5'],
    ['f', ''],
  ]);
  t.strictSame(kvPairs('x="a \\"quoted\\" v" y=2', '=', true), [
    ['x', 'a "quoted" v'],
    ['y', '2'],
  ]);
  const r = one('kvParse()', ev('ts user=bob status=200 path="/a b"', { status: 'keep' }))!;
  t.equal(r['user'], 'bob');
  t.equal(r['path'], '/a b');
  t.equal(r['status'], 'keep', 'existing fields are kept without override');
  t.equal(one('kvParse(override=true)', ev('status=200', { status: 'keep' }))!['status'], '200');
  t.equal(one('kvParse(as="kv.")', ev('a=1'))!['kv.a'], '1');
  t.equal(one('kvParse(separator=":")', ev('a:1 b:2'))!['b'], '2');
  t.equal(one('kvParse(excludeEmpty=true)', ev('a= b=2'))!['a'], undefined);
  t.equal(one('kvParse(field=m)', ev('x', { m: 'k=v' }))!['k'], 'v');
  // A long line without separators is linear (no quadratic rescans).
  const long = 'x'.repeat(200_000);
  const t0 = Date.now();
  one('kvParse()', ev(long));
  t.ok(Date.now() - t0 < 1000);
});

t.test('parseTimestamp(): Java patterns, zones, optional sections, epoch formats, errors', async (t) => {
  const p = (q: string, v: string): Fields => one(q, ev('x', { ts: v }))!;
  t.equal(p('parseTimestamp(field=ts)', '2020-03-25T14:15:00.394Z')['@timestamp'], String(Date.UTC(2020, 2, 25, 14, 15, 0, 394)));
  t.equal(p('parseTimestamp(field=ts)', '2020-03-25T14:15:00+02:00')['@timestamp'], String(Date.UTC(2020, 2, 25, 12, 15, 0)));
  t.equal(p('parseTimestamp(field=ts)', '2020-03-25T14:15:00+02:00')['@timezone'], '+02:00');
  t.equal(p('parseTimestamp("yyyy-MM-dd HH:mm:ss", field=ts, timezone=UTC)', '2021-01-02 03:04:05')['@timestamp'], String(Date.UTC(2021, 0, 2, 3, 4, 5)));
  t.equal(p('parseTimestamp("yyyy-MM-dd HH:mm:ss", field=ts, timezone="+01:00")', '2021-01-02 03:04:05')['@timestamp'], String(Date.UTC(2021, 0, 2, 2, 4, 5)));
  t.equal(p('parseTimestamp("dd/MMM/yyyy:HH:mm:ss Z", field=ts)', '10/Oct/2000:13:55:36 -0700')['@timestamp'], String(Date.UTC(2000, 9, 10, 20, 55, 36)));
  t.equal(p("parseTimestamp(\"yyyy-MM-dd'T'HH:mm:ss[.SSS]XXX\", field=ts)", '2020-01-01T00:00:00Z')['@timestamp'], String(Date.UTC(2020, 0, 1)));
  t.equal(p("parseTimestamp(\"yyyy-MM-dd'T'HH:mm:ss[.SSS]XXX\", field=ts)", '2020-01-01T00:00:00.5Z')['@timestamp'], String(Date.UTC(2020, 0, 1) + 500));
  t.equal(p('parseTimestamp("MMM dd yyyy hh:mm a", field=ts, timezone=UTC)', 'Feb 03 2022 01:30 PM')['@timestamp'], String(Date.UTC(2022, 1, 3, 13, 30)));
  t.equal(p('parseTimestamp("yyyyMMddHHmmss", field=ts, timezone="Europe/Copenhagen")', '20220701120000')['@timestamp'], String(Date.UTC(2022, 6, 1, 10)), 'CEST is +2 in July');
  t.equal(p('parseTimestamp("yyyy-MM-dd HH:mm:ss z", field=ts)', '2022-07-01 12:00:00 UTC')['@timestamp'], String(Date.UTC(2022, 6, 1, 12)));
  t.equal(p('parseTimestamp("millis", field=ts)', '1585145569394')['@timestamp'], '1585145569394');
  t.equal(p('parseTimestamp("seconds", field=ts)', '1585145569.394')['@timestamp'], '1585145569394');
  t.equal(p('parseTimestamp(unixTimeSeconds, field=ts, as=t2)', '1585145569')['t2'], '1585145569000');
  t.equal(p('parseTimestamp("nanos", field=ts)', '1585145569394000000')['@timestamp'], '1585145569394');
  const bad = p('parseTimestamp("yyyy-MM-dd", field=ts)', 'yesterday');
  t.equal(bad['@error'], 'true');
  t.match(bad['@error_msg'], /parseTimestamp/);
  t.equal(bad['@timestamp'], ev('x')['@timestamp']!.length > 0 ? bad['@timestamp'] : '', 'the timestamp is left alone');
  // A text without a zone: timezone=, else the zone of timezoneField (default @timezone), else an error.
  const zoneless = (q: string, fields: Fields): Fields => {
    const e = ev('x', { ts: '2021-01-02 03:04:05', ...fields });
    delete e['@timezone'];
    return one(q, { ...e, ...fields })!;
  };
  t.match(zoneless('parseTimestamp("yyyy-MM-dd HH:mm:ss", field=ts)', {})['@error_msg'], /time zone/, 'no zone anywhere: an error');
  t.equal(zoneless('parseTimestamp("yyyy-MM-dd HH:mm:ss", field=ts)', { '@timezone': '+01:00' })['@timestamp'], String(Date.UTC(2021, 0, 2, 2, 4, 5)), 'the event\'s @timezone');
  t.equal(zoneless('parseTimestamp("yyyy-MM-dd HH:mm:ss", field=ts, timezoneField=tz)', { tz: 'Europe/Copenhagen' })['@timestamp'], String(Date.UTC(2021, 0, 2, 2, 4, 5)), 'timezoneField=');
  t.equal(zoneless('parseTimestamp("yyyy-MM-dd HH:mm:ss", field=ts, timezone=UTC)', { '@timezone': '+01:00' })['@timestamp'], String(Date.UTC(2021, 0, 2, 3, 4, 5)), 'timezone= wins');
  t.equal(p('parseTimestamp("yyyy-MM-dd", field=ts, addErrors=false)', 'nope')['@error'], undefined);
  t.throws(() => run('parseTimestamp("yyyy-QQ", field=ts)', []), { code: 'E_QUERY', message: /pattern letter Q/ });
  t.throws(() => run('parseTimestamp("yyyy")', []), { code: 'E_QUERY', message: /requires parameter field/ });
});
