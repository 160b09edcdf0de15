import t from 'tap';
import { col, ev, rowsOf, type Fields } from './driver.js';

/** The @rawstring of the events a filter query keeps, oldest first. */
function kept(q: string, events: Fields[]): string[] {
  return rowsOf(q, events)
    .map((r) => [Number(r['@timestamp']), r['@rawstring']!] as const)
    .sort((a, b) => a[0] - b[0])
    .map((x) => x[1]);
}

const LOG = [
  ev('GET /login 200 user=alice', { method: 'GET', url: '/login', status: '200', user: 'alice' }, 1000),
  ev('POST /api/Login 500 user=bob', { method: 'POST', url: '/api/Login', status: '500', user: 'bob' }, 2000),
  ev('GET /index.html 404', { method: 'GET', url: '/index.html', status: '404', user: '' }, 3000),
  ev('GET /star*page 301 foo bar', { method: 'GET', url: '/star*page', status: '301' }, 4000),
  ev('DELETE /x timeout after 30s', { method: 'DELETE', url: '/x', status: 'abc' }, 5000),
];

t.test('free text: case-insensitive, unanchored, over @rawstring and the stored fields; wildcards quoted or not', async (t) => {
  t.strictSame(kept('login', LOG), ['GET /login 200 user=alice', 'POST /api/Login 500 user=bob']);
  t.strictSame(kept('"LOGIN 5"', LOG), ['POST /api/Login 500 user=bob']);
  t.strictSame(kept('get*html', LOG), ['GET /index.html 404']);
  t.strictSame(kept('"star*page"', LOG), ['GET /star*page 301 foo bar'], 'quoted star is a wildcard');
  t.strictSame(kept('"get*html"', LOG), ['GET /index.html 404'], 'quoted: * is a wildcard too');
  t.strictSame(kept('"get**html"', LOG), ['GET /index.html 404'], 'repeated stars are one');
  t.strictSame(kept('Alice', LOG), ['GET /login 200 user=alice']);
  t.strictSame(kept('api/login', LOG), ['POST /api/Login 500 user=bob']);
  t.strictSame(kept('*', LOG).length, 5);
  t.strictSame(kept('', LOG).length, 5, 'empty query is *');
});

t.test('free-text regex on @rawstring with flags', async (t) => {
  t.strictSame(kept('/login \\d+/', LOG), ['GET /login 200 user=alice']);
  t.strictSame(kept('/login \\d+/i', LOG), ['GET /login 200 user=alice', 'POST /api/Login 500 user=bob']);
  t.strictSame(kept('/^get/i', LOG).length, 3);
});

t.test('field filters: exact, wildcard, regex, presence, empty', async (t) => {
  t.strictSame(kept('method=GET', LOG).length, 3);
  t.strictSame(kept('method=get', LOG).length, 0, 'field values are case-sensitive');
  t.strictSame(kept('url=*login*', LOG), ['GET /login 200 user=alice']);
  t.strictSame(kept('url=*ogin', LOG), ['GET /login 200 user=alice', 'POST /api/Login 500 user=bob']);
  t.strictSame(kept('url="/star*page"', LOG), ['GET /star*page 301 foo bar'], 'quoted value: the star is a wildcard (matches itself too)');
  t.strictSame(kept('url=/\\*/', LOG), ['GET /star*page 301 foo bar'], 'a literal star: with a regex');
  t.strictSame(kept('url="*login*"', LOG), ['GET /login 200 user=alice'], 'quoted value: * is a wildcard too');
  t.strictSame(kept('url="*"', LOG).length, 5, 'quoted *: present');
  t.strictSame(kept('url=/login$/i', LOG).length, 2);
  t.strictSame(kept('url!=/login$/i', LOG).length, 3);
  t.strictSame(kept('user=*', LOG).length, 3, 'present (empty counts)');
  t.strictSame(kept('user!=*', LOG).length, 2, 'absent');
  t.strictSame(kept('user=""', LOG), ['GET /index.html 404'], 'present and empty');
  t.strictSame(kept('user!=alice', LOG).length, 4, 'missing field: != is true');
  t.strictSame(kept('nosuch=x', LOG).length, 0);
  t.strictSame(kept('#type=kv', LOG).length, 5, 'tags are fields');
  t.strictSame(kept('#type=k*', LOG).length, 5);
  t.strictSame(kept('#type!=kv', LOG).length, 0);
  t.strictSame(kept('url like "login"', LOG).length, 1, 'like: unanchored, case-sensitive');
});

t.test('numeric comparisons: numbers only, non-numbers and missing fail', async (t) => {
  t.strictSame(kept('status>=404', LOG), ['POST /api/Login 500 user=bob', 'GET /index.html 404']);
  t.strictSame(kept('status<300', LOG), ['GET /login 200 user=alice']);
  t.strictSame(kept('status<=301', LOG).length, 2);
  t.strictSame(kept('status>100', LOG).length, 4, 'status=abc is not a number');
  t.strictSame(kept('status > 3e2', LOG).length, 3);
});

t.test('and / or / not and the precedence examples of query-functions.md §2.6 (or binds tighter than and)', async (t) => {
  const E = [
    ev('foo', {}, 1),
    ev('bar', {}, 2),
    ev('baz', {}, 3),
    ev('foo bar', {}, 4),
    ev('foo baz', {}, 5),
    ev('bar baz', {}, 6),
    ev('foo bar baz', {}, 7),
    ev('qux', {}, 8),
    ev('foo statuscode', { statuscode: '200' }, 9),
    ev('foo other', { statuscode: '404' }, 10),
  ];
  const raws = E.map((e) => e['@rawstring']!);
  const has = (r: string, w: string): boolean => r.split(' ').includes(w);
  // foo and not bar or baz == foo and ((not bar) or baz)
  t.strictSame(kept('foo and not bar or baz', E), raws.filter((r) => has(r, 'foo') && (!has(r, 'bar') || has(r, 'baz'))));
  // foo or not bar and baz == (foo or (not bar)) and baz
  t.strictSame(kept('foo or not bar and baz', E), raws.filter((r) => (has(r, 'foo') || !has(r, 'bar')) && has(r, 'baz')));
  // not foo bar == (not foo) and bar
  t.strictSame(kept('not foo bar', E), raws.filter((r) => !has(r, 'foo') && has(r, 'bar')));
  // foo not statuscode=200 == foo and statuscode!=200
  t.strictSame(kept('foo not statuscode=200', E), kept('foo and statuscode!=200', E));
  t.strictSame(kept('foo not statuscode=200', E), raws.filter((r) => has(r, 'foo') && r !== 'foo statuscode'));
  t.strictSame(kept('(foo or bar) and !baz', E), raws.filter((r) => (has(r, 'foo') || has(r, 'bar')) && !has(r, 'baz')));
  t.strictSame(kept('foo | bar', E), kept('foo bar', E), 'pipe is and');
});

t.test('a top-level regex extracts named groups; inside or/not it only filters', async (t) => {
  const E = [ev('user=alice id=42', {}, 1), ev('user=bob id=x', {}, 2)];
  const rows = rowsOf('/user=(?<who>\\w+) id=(?<the.id>\\d+)/', E);
  t.strictSame(col(rows, 'who'), ['alice']);
  t.strictSame(col(rows, 'the.id'), ['42'], 'group names may contain dots');
  const two = rowsOf('/user=(?<who>\\w+)/ | who=bob', E);
  t.equal(two.length, 1);
  const orRows = rowsOf('/user=(?<who>alice)/ or "id=x"', E);
  t.equal(orRows.length, 2);
  t.strictSame(col(orRows, 'who'), [undefined, undefined], 'no extraction inside or');
  const conj = rowsOf('id /user=(?<who>\\w+)/ who=alice', E);
  t.strictSame(col(conj, 'who'), ['alice'], 'extraction as a conjunct feeds later conjuncts');
  const field = rowsOf('@rawstring=/id=(?<n>\\d+)/', E);
  t.strictSame(col(field, 'n'), ['42'], 'field = /regex/ extracts too');
});

t.test('filter functions: in (wildcards, ignoreCase, negation), test, cidr', async (t) => {
  t.strictSame(kept('in(method, values=[GET, "DEL*"])', LOG).length, 4);
  t.strictSame(kept('!in(method, values=[GET, "DEL*"])', LOG), ['POST /api/Login 500 user=bob']);
  t.strictSame(kept('in(field=method, values=[get], ignoreCase=true)', LOG).length, 3);
  t.strictSame(kept('in(nosuch, values=[x])', LOG).length, 0);
  t.strictSame(kept('test(status > 300)', LOG), ['POST /api/Login 500 user=bob', 'GET /index.html 404', 'GET /star*page 301 foo bar']);
  t.strictSame(kept('test(method == "GET" and status != 200)', LOG).length, 2);
  const ips = [ev('a', { ip: '10.1.2.3' }, 1), ev('b', { ip: '192.168.0.1' }, 2), ev('c', { ip: '2001:db8::1' }, 3), ev('d', {}, 4)];
  t.strictSame(kept('cidr(ip, subnet="10.0.0.0/8")', ips), ['a']);
  t.strictSame(kept('ip =~ cidr(subnet=["192.168.0.0/16", "2001:db8::/32"])', ips), ['b', 'c']);
  t.strictSame(kept('!cidr(ip, subnet="10.0.0.0/8")', ips), ['b', 'c', 'd']);
  t.strictSame(kept('cidr(ip, subnet="10.0.0.0/8", negate=true)', ips), ['b', 'c', 'd']);
});

t.test('query parameters: arguments, defaults', async (t) => {
  t.strictSame(rowsOf('method=?m', LOG, { args: { m: 'POST' } }).length, 1);
  t.strictSame(rowsOf('status>?{min=400}', LOG).length, 2);
  t.strictSame(rowsOf('status>?{min=400}', LOG, { args: { min: '250' } }).length, 3);
  t.strictSame(rowsOf('?word', LOG, { args: { word: 'timeout' } }).length, 1);
  t.strictSame(rowsOf('head(limit=?n)', LOG, { args: { n: '2' } }).length, 2);
});

t.test('a filter query gets the implicit tail(200): newest first, at most 200', async (t) => {
  const many = Array.from({ length: 450 }, (_, i) => ev(`line ${i}`, {}, 10_000 + i));
  const rows = rowsOf('line', many);
  t.equal(rows.length, 200);
  t.equal(rows[0]!['@rawstring'], 'line 449');
  t.equal(rows[199]!['@rawstring'], 'line 250');
});
