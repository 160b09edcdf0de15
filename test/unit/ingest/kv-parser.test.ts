import t from 'tap';
import { KvParser } from '../../../src/ingest/parsers/kv.js';
import { MAX_FIELD_NAME_CHARS } from '../../../src/ingest/limits.js';

const kv = new KvParser();

t.test('a leading ISO timestamp and quoted, single-quoted and bare values', async (t) => {
  const line =
    '2024-03-05T14:22:01.123+01:00 INFO [main] user=alice action="log in" ip=10.0.0.1 ' +
    "msg='single quoted' note=\"say \\\"hi\\\" \\\\o/\" path=\"C:\\temp\\x\" it='it\\'s'";
  const r = kv.parse(line, 100);
  t.equal(r.timestamp, Date.UTC(2024, 2, 5, 13, 22, 1, 123));
  t.equal(r.timezone, '+01:00');
  t.equal(r.error, null);
  t.same(r.fields, {
    user: 'alice',
    action: 'log in',
    ip: '10.0.0.1',
    msg: 'single quoted',
    note: 'say "hi" \\o/',
    path: 'C:\\temp\\x',
    it: "it's",
  });
});

t.test('the timestamp may follow a prefix within the first 128 characters', async (t) => {
  const bracket = kv.parse('[2024-03-05 14:22:01Z] level=warn', 10);
  t.equal(bracket.timestamp, Date.UTC(2024, 2, 5, 14, 22, 1));
  t.equal(bracket.timezone, 'Z');
  t.same(bracket.fields, { level: 'warn' });

  const syslogish = kv.parse('<13>Mar  5 14:22:01 web-1 app[12]: 2024-03-05T14:22:01.5-0500 status=ok', 10);
  t.equal(syslogish.timestamp, Date.UTC(2024, 2, 5, 19, 22, 1, 500));
  t.equal(syslogish.timezone, '-05:00');

  const first = kv.parse('2024-01-01T00:00:00Z then 2025-01-01T00:00:00Z', 10);
  t.equal(first.timestamp, Date.UTC(2024, 0, 1), 'the first match wins');

  const at127 = `${'x'.repeat(127)}2024-01-01T00:00:00Z`;
  t.equal(kv.parse(at127, 10).timestamp, Date.UTC(2024, 0, 1), 'starting at index 127 is inside the window');
  const at128 = `${'x'.repeat(128)}2024-01-01T00:00:00Z`;
  t.equal(kv.parse(at128, 10).timestamp, null, 'starting at index 128 is outside');
});

t.test('no timestamp is not an error; zone-less or invalid dates are not timestamps', async (t) => {
  for (const line of [
    'user=bob',
    '2024-03-05T14:22:01 a=1',
    '2024-02-30T14:22:01Z a=1',
    '12024-03-05T14:22:01Z a=1',
    '2024-03-05T14:22:01+02001 a=1',
    '',
  ]) {
    const r = kv.parse(line, 10);
    t.equal(r.timestamp, null, JSON.stringify(line));
    t.equal(r.timezone, null);
    t.equal(r.error, null);
  }
  t.same(kv.parse('2024-03-05T14:22:01 a=1', 10).fields, { a: '1' });
});

t.test('key rules', async (t) => {
  const r = kv.parse('--level=info 9abc=1 x.y-z@w=2 =novalue a==b "q"=x _u=3 @at=4 é=5 k:v=6', 20);
  t.same(r.fields, { level: 'info', abc: '1', 'x.y-z@w': '2', a: '=b', _u: '3', '@at': '4', v: '6' });
});

t.test('value rules', async (t) => {
  t.same(kv.parse('a=1 a=2', 10).fields, { a: '2' }, 'a repeated key keeps the last value');
  t.same(kv.parse('a= b=1', 10).fields, { a: '', b: '1' }, 'an empty value is kept');
  t.same(kv.parse('a=1,b=2 c=3;d=4', 10).fields, { a: '1,b=2', c: '3;d=4' }, 'bare values run to whitespace');
  t.same(kv.parse('msg="x=1 y=2" z=3', 10).fields, { msg: 'x=1 y=2', z: '3' }, 'pairs inside quotes are not pairs');
  t.same(kv.parse('a=1 msg="truncated li', 10).fields, { a: '1', msg: 'truncated li' }, 'unterminated quote takes the rest');
  t.same(kv.parse("a='' b=\"\"", 10).fields, { a: '', b: '' });
  t.same(kv.parse('a="x"b=2', 10).fields, { a: 'x', b: '2' });
  t.same(kv.parse('a=\tb=1\nc=2', 10).fields, { a: '', b: '1', c: '2' });
  t.same(kv.parse('end=', 10).fields, { end: '' });
  t.same(kv.parse('ключ=значение k=v', 10).fields, { k: 'v' });
});

t.test('maxFields', async (t) => {
  t.same(kv.parse('a=1 b=2 c=3', 2).fields, { a: '1', b: '2' });
  t.same(kv.parse('a=1 a=2 b=3', 1).fields, { a: '2' }, 'replacing a field does not use up the limit');
  t.same(kv.parse('a=1', 0).fields, {});
  t.equal(kv.parse('a=1 b=2 c=3', 2).error, null, 'hitting the limit is not an error');
});

t.test('a key longer than MAX_FIELD_NAME_CHARS is not a field (its text stays in the raw string)', async (t) => {
  const long = 'k'.repeat(MAX_FIELD_NAME_CHARS + 1);
  const r = kv.parse(`a=1 ${long}=2 b=3`, 100);
  t.same(r.fields, { a: '1', b: '3' });
});
