import t from 'tap';
import { JsonParser } from '../../../src/ingest/parsers/json.js';

const json = new JsonParser();

t.test('nested objects and arrays, @timestamp as an ISO string', async (t) => {
  const line = JSON.stringify({
    '@timestamp': '2024-03-05T14:22:01.5+02:00',
    level: 'info',
    user: { name: 'bob', roles: ['admin', 'dev'], address: { city: 'Aarhus' } },
    n: 3,
    ok: true,
    nil: null,
    matrix: [[1, 2], [3]],
  });
  const r = json.parse(line, 100);
  t.equal(r.error, null);
  t.equal(r.timestamp, Date.UTC(2024, 2, 5, 12, 22, 1, 500));
  t.equal(r.timezone, '+02:00');
  t.same(r.fields, {
    level: 'info',
    'user.name': 'bob',
    'user.roles[0]': 'admin',
    'user.roles[1]': 'dev',
    'user.address.city': 'Aarhus',
    n: '3',
    ok: 'true',
    'matrix[0][0]': '1',
    'matrix[0][1]': '2',
    'matrix[1][0]': '3',
  });
  t.notOk(Object.hasOwn(r.fields, '@timestamp'), '@timestamp is the event time, not a field');
});

t.test('@timestamp as epoch milliseconds', async (t) => {
  const r = json.parse('{"@timestamp":1709648521123,"msg":"hi"}', 10);
  t.equal(r.timestamp, 1709648521123);
  t.equal(r.timezone, 'Z');
  t.same(r.fields, { msg: 'hi' });
  t.equal(json.parse('{"@timestamp":1709648521123.9}', 10).timestamp, 1709648521123, 'fractions truncated');
  t.equal(json.parse('{"@timestamp":0}', 10).timestamp, 0);
});

t.test('a top-level timestamp member is used when @timestamp is absent', async (t) => {
  const iso = json.parse('{"timestamp":"2024-03-05T14:22:01Z","a":1}', 10);
  t.equal(iso.timestamp, Date.UTC(2024, 2, 5, 14, 22, 1));
  t.same(iso.fields, { timestamp: '2024-03-05T14:22:01Z', a: '1' }, 'timestamp stays a field');
  t.equal(json.parse('{"timestamp":1000}', 10).timestamp, 1000);

  const both = json.parse('{"timestamp":1000,"@timestamp":2000}', 10);
  t.equal(both.timestamp, 2000, '@timestamp wins');

  const junk = json.parse('{"timestamp":"last tuesday"}', 10);
  t.equal(junk.timestamp, null);
  t.equal(junk.error, null, 'an unreadable plain timestamp member is just a field');
  t.same(junk.fields, { timestamp: 'last tuesday' });

  const nested = json.parse('{"meta":{"@timestamp":"2024-03-05T14:22:01Z"}}', 10);
  t.equal(nested.timestamp, null, 'only top-level members count');
  t.same(nested.fields, { 'meta.@timestamp': '2024-03-05T14:22:01Z' });
});

t.test('no timestamp at all is not an error', async (t) => {
  const r = json.parse('  {"a":"b"}\n', 10);
  t.same(r, { timestamp: null, timezone: null, fields: { a: 'b' }, error: null });
  t.equal(json.parse('{"@timestamp":null,"a":1}', 10).error, null, 'null counts as absent');
});

t.test('an unreadable @timestamp is an error but the fields are kept', async (t) => {
  for (const v of ['"2024-03-05T14:22:01"', '"yesterday"', 'true', '{"x":1}', '1e300', '"2024-02-30T00:00:00Z"']) {
    const r = json.parse(`{"@timestamp":${v},"a":1}`, 10);
    t.equal(r.timestamp, null, v);
    t.match(r.error, /^@timestamp .* is neither an ISO 8601 date-time with a zone nor epoch milliseconds$/);
    t.equal(r.fields['a'], '1');
  }
  const long = json.parse(`{"@timestamp":"${'x'.repeat(10_000)}"}`, 10);
  t.ok((long.error ?? '').length < 200, 'the quoted value is shortened');
});

t.test('anything but a JSON object is an error with no fields', async (t) => {
  const cases: [string, RegExp][] = [
    ['', /^not a JSON object: empty input$/],
    ['   \n', /^not a JSON object: empty input$/],
    ['hello world', /^not a JSON object: /],
    ['{"a":1', /^not a JSON object: /],
    ['[1,2]', /^not a JSON object: found an array$/],
    ['"text"', /^not a JSON object: found a string$/],
    ['42', /^not a JSON object: found a number$/],
    ['null', /^not a JSON object: found null$/],
    ['{"a":1}{"b":2}', /^not a JSON object: /],
  ];
  for (const [line, error] of cases) {
    const r = json.parse(line, 10);
    t.match(r.error, error, JSON.stringify(line));
    t.same(r.fields, {});
    t.equal(r.timestamp, null);
    t.notOk((r.error ?? '').includes('\n'), 'one line');
  }
  const big = json.parse(`{"a":"${'x'.repeat(100_000)}`, 10);
  t.ok((big.error ?? '').length < 250, 'the parse error is short');
});

t.test('nesting depth is bounded at 64', async (t) => {
  const nest = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
  const ok = json.parse(nest(64), 10);
  t.equal(ok.error, null);
  t.same(Object.keys(ok.fields), [Array(64).fill('a').join('.')]);
  const deep = json.parse(nest(65), 10);
  t.match(deep.error, /nesting deeper than 64 levels/);
  t.same(deep.fields, {});
  const arrays = json.parse(`{"a":${'['.repeat(200_000)}${']'.repeat(200_000)}}`, 10);
  t.match(arrays.error, /nesting deeper than 64 levels/);
});

t.test('maxFields', async (t) => {
  const r = json.parse('{"a":1,"b":{"c":2,"d":3},"e":4}', 2);
  t.same(r.fields, { a: '1', 'b.c': '2' });
  t.equal(r.error, null);
  const ts = json.parse('{"@timestamp":5,"a":1,"b":2}', 2);
  t.equal(ts.timestamp, 5, 'the timestamp is read even when fields are cut');
  t.ok(Object.keys(ts.fields).length <= 2);
});
