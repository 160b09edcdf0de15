import t from 'tap';
import { AccessLogParser } from '../../../src/ingest/parsers/accesslog.js';

const accesslog = new AccessLogParser();

t.test('an nginx combined line', async (t) => {
  const line =
    '203.0.113.7 - - [05/Mar/2024:14:22:01 +0100] "GET /api/v1/items?id=3&x=a%20b HTTP/1.1" 200 512 ' +
    '"https://example.com/start" "Mozilla/5.0 (X11; Linux x86_64; rv:123.0) Gecko/20100101 Firefox/123.0"\n';
  const r = accesslog.parse(line, 100);
  t.equal(r.error, null);
  t.equal(r.timestamp, Date.UTC(2024, 2, 5, 13, 22, 1));
  t.equal(r.timezone, '+01:00');
  t.same(r.fields, {
    client: '203.0.113.7',
    method: 'GET',
    url: '/api/v1/items?id=3&x=a%20b',
    httpversion: '1.1',
    statuscode: '200',
    responsesize: '512',
    referrer: 'https://example.com/start',
    useragent: 'Mozilla/5.0 (X11; Linux x86_64; rv:123.0) Gecko/20100101 Firefox/123.0',
  });
});

t.test('an Apache common line', async (t) => {
  const r = accesslog.parse('127.0.0.1 user-identifier frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326', 100);
  t.equal(r.error, null);
  t.equal(r.timestamp, Date.UTC(2000, 9, 10, 20, 55, 36));
  t.equal(r.timezone, '-07:00');
  t.same(r.fields, {
    client: '127.0.0.1',
    ident: 'user-identifier',
    userid: 'frank',
    method: 'GET',
    url: '/apache_pb.gif',
    httpversion: '1.0',
    statuscode: '200',
    responsesize: '2326',
  });
});

t.test('trailing response time, "-" sizes, escaped quotes, HTTP/2', async (t) => {
  const r = accesslog.parse(
    '2001:db8::1 - alice [01/Jan/2024:00:00:00 +0000] "POST /login HTTP/2.0" 302 - "-" "curl \\"8.0\\"" 0.004',
    100,
  );
  t.equal(r.error, null);
  t.equal(r.timestamp, Date.UTC(2024, 0, 1));
  t.equal(r.timezone, '+00:00');
  t.same(r.fields, {
    client: '2001:db8::1',
    userid: 'alice',
    method: 'POST',
    url: '/login',
    httpversion: '2.0',
    statuscode: '302',
    referrer: '-',
    useragent: 'curl \\"8.0\\"',
    responsetime: '0.004',
  });
  const common = accesslog.parse('h - - [01/Jan/2024:00:00:00 +0000] "GET / HTTP/1.1" 200 5 1234', 100);
  t.equal(common.fields['responsetime'], '1234', 'a response time after the common format');
  const extra = accesslog.parse('h - - [01/Jan/2024:00:00:00 +0000] "GET / HTTP/1.1" 200 5 "r" "ua" "10.1.1.1" rt=0.1', 100);
  t.equal(extra.error, null, 'extra trailing fields of custom formats are ignored');
  t.notOk(Object.hasOwn(extra.fields, 'responsetime'));
  t.equal(extra.fields['useragent'], 'ua');
});

t.test('requests that are not METHOD url VERSION', async (t) => {
  const dash = accesslog.parse('10.0.0.1 - - [05/Mar/2024:14:22:01 +0100] "-" 400 0 "-" "-"', 100);
  t.equal(dash.error, null);
  t.same(dash.fields, { client: '10.0.0.1', statuscode: '400', responsesize: '0', referrer: '-', useragent: '-' });
  const tls = accesslog.parse('10.0.0.1 - - [05/Mar/2024:14:22:01 +0100] "\\x16\\x03\\x01" 400 150 "-" "-"', 100);
  t.notOk(Object.hasOwn(tls.fields, 'method'));
  const http09 = accesslog.parse('h - - [05/Mar/2024:14:22:01 +0100] "GET /old" 200 1', 100);
  t.same([http09.fields['method'], http09.fields['url'], http09.fields['httpversion']], ['GET', '/old', undefined]);
  const spaces = accesslog.parse('h - - [05/Mar/2024:14:22:01 +0100] "GET /a b HTTP/1.1" 400 1', 100);
  t.equal(spaces.fields['url'], '/a b', 'a url with an unescaped space');
});

t.test('lines that do not match are errors with no fields', async (t) => {
  const bad = [
    '',
    'hello world',
    '127.0.0.1 frank [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 2326',
    '127.0.0.1 - - 10/Oct/2000:13:55:36 -0700 "GET / HTTP/1.0" 200 2326',
    '127.0.0.1 - - [32/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 2326',
    '127.0.0.1 - - [29/Feb/2001:13:55:36 -0700] "GET / HTTP/1.0" 200 2326',
    '127.0.0.1 - - [10/Okt/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 2326',
    '127.0.0.1 - - [10/Oct/2000:25:55:36 -0700] "GET / HTTP/1.0" 200 2326',
    '127.0.0.1 - - [10/Oct/2000:13:55:36] "GET / HTTP/1.0" 200 2326',
    '127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] GET / HTTP/1.0 200 2326',
    '127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0 200 2326',
    '127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" OK 2326',
    '127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200',
    '127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 lots',
  ];
  for (const line of bad) {
    const r = accesslog.parse(line, 100);
    t.match(r.error, /^not an access log line: /, JSON.stringify(line));
    t.same(r.fields, {});
    t.equal(r.timestamp, null);
  }
  t.match(accesslog.parse(bad[4]!, 10).error, /date/, 'the message says what was wrong');
});

t.test('maxFields', async (t) => {
  const r = accesslog.parse('127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /x HTTP/1.0" 200 2326 "r" "ua"', 3);
  t.same(r.fields, { client: '127.0.0.1', method: 'GET', url: '/x' });
  t.equal(r.timestamp, Date.UTC(2000, 9, 10, 20, 55, 36));
});
