/**
 * The grammar of query-functions.md §2 as a table: each query with the events it keeps (by their
 * @rawstring), the value it computes, or the error it gives (with line and column). Expected
 * answers follow the documented rules, one row per rule or example.
 */
import t from 'tap';
import { ev, rowsOf, run, type Fields } from './driver.js';

const E: Fields[] = [
  ev('GET /login 200 alice', { method: 'GET', url: '/login', status: '200', user: 'alice', 'host-name': 'web1', agent: 'Mozilla Bucket' }, 1000),
  ev('POST /api 500 bob', { method: 'POST', url: '/api/Bucket', status: '500', user: 'bob', code: '42' }, 2000),
  ev('GET /star*page 404', { method: 'GET', url: '/star*page', status: '404', user: '' }, 3000),
  ev('DELETE /x timeout', { method: 'DELETE', url: '/x', status: 'abc', note: 'hidden-word' }, 4000),
];

const keptBy = (q: string, args?: Record<string, string>): string[] =>
  rowsOf(q, E, args === undefined ? {} : { args })
    .map((r) => [Number(r['@timestamp']), r['@rawstring']!] as const)
    .sort((a, b) => a[0] - b[0])
    .map((x) => x[1]);

const [A, B, C, D] = E.map((e) => e['@rawstring']!) as [string, string, string, string];

/** [query, kept events] */
const KEEPS: [string, string[], string][] = [
  // §2.1 adjacency is AND; newlines are whitespace
  ['method=GET status=200', [A], 'adjacent filters are and'],
  ['method=GET\n| status=200', [A], 'a newline is whitespace'],
  ['method=GET // a comment\n status=404', [C], '// comments'],
  ['method=GET /* block\ncomment */ status=404', [C], '/* */ comments span lines'],
  // §2.2 wildcards, quoting, anchoring
  ['url="/star*"', [C], '* is a wildcard inside quotes'],
  ['url=*login', [A], 'anchored: the whole value'],
  ['url=login', [], 'anchored: no substring match'],
  ['login', [A], 'free text is unanchored'],
  ['LOGIN', [A], 'free text ignores case'],
  ['"star*page"', [C], 'quoted free text: * is still a wildcard'],
  ['url=/\\*/', [C], 'a literal star: only with a regex'],
  ['hidden-word', [D], 'free text searches every stored field'],
  ['web1', [A], 'free text searches fields not in @rawstring'],
  ['user=*', [A, B, C], 'f=* : present'],
  ['user!=*', [D], 'f!=* : absent'],
  ['user=""', [C], 'present and empty'],
  ['user!=alice', [B, C, D], 'a missing field is != anything'],
  ['"host-name"=web1', [A], 'quoted field names'],
  ['`host-name`=web1', [A], 'backquoted field names'],
  ['#type=kv method=POST', [B], 'tag filters'],
  // §2.3 like
  ['agent like "Bucket"', [A], 'like: contains, case-sensitive'],
  ['url like Bucket', [B], 'like: unquoted'],
  ['url like "bucket"', [], 'like is case-sensitive'],
  ['url like "star*age"', [C], 'like: * allowed'],
  ['url like ?p', [B], 'like: ?param'],
  // §2.4 comparisons
  ['status>=404', [B, C], 'numeric; a non-number fails'],
  ['status < 300', [A], ''],
  ['test(status > 250)', [B, C], 'test(): a non-number is null, the event fails'],
  ['test(user == "bob")', [B], '== compares any values'],
  ['test(status == 500.0)', [B], 'numbers compare as numbers'],
  ['test(method != "GET")', [B, D], ''],
  ['test(!(status > 300))', [A], '! negates; null stays null'],
  // §2.6 precedence: not, then or, then and
  ['method=GET or method=POST status=500', [B], '(GET or POST) and 500'],
  ['status=500 or status=404 method=GET', [C], 'or binds tighter than and'],
  ['not method=GET status=500', [B], '(not GET) and 500'],
  ['method=GET not status=200', [C], 'foo not x=1 == foo and x!=1'],
  ['method=GET and not status=200 or user=alice', [A, C], 'GET and ((not 200) or alice)'],
  // §2.7 regexes
  ['/LOGIN/i', [A], 'flag i'],
  ['/login/iF', [A], 'flag F is accepted'],
  ['url=/^\\/api/', [B], 'field = /re/'],
  ['/hidden/', [D], 'a bare /re/ searches the fields too'],
  // §2.9 =~ and negation
  ['method =~ in(values=["GET", "PUT"])', [A, C], 'f =~ fn() is fn(field=f)'],
  ['method =~ !in(values=["GET", "PUT"])', [B, D], 'negated'],
  ['user =~ wildcard("b*")', [B], ''],
  // §2.10 parameters
  ['method=?m', [B], '?param'],
  ['method=?{m2="DELETE"}', [D], '?{name=default}'],
  ['?{"q x"="timeout"}', [D], 'quoted parameter names with a default'],
];

t.test('filters keep what §2 says', async (t) => {
  for (const [q, want, why] of KEEPS) t.strictSame(keptBy(q, { p: 'Bucket', m: 'POST' }), want, `${q}${why === '' ? '' : `: ${why}`}`);
});

t.test(':= and eval assign nothing without a value and keep the event (§2.5)', async (t) => {
  const rows = rowsOf('x := code * 2 | y := nosuch | z := "lit"', E);
  t.equal(rows.length, 4, 'no event dropped');
  t.strictSame(rows.map((r) => r['x']).filter((x) => x !== undefined), ['84']);
  t.strictSame(rows.map((r) => r['y']).filter((x) => x !== undefined), []);
  t.strictSame(rows.map((r) => r['z']), ['lit', 'lit', 'lit', 'lit']);
  t.strictSame(rowsOf('user := nosuch', E).map((r) => r['user']).sort(), ['', 'alice', 'bob', undefined].sort() as string[], 'an existing field keeps its value');
  t.strictSame(rowsOf('m := min(status)', E), [{ m: '200' }], 'f := fn() is fn(as=f)');
  t.strictSame(rowsOf('r := status > 300', E).map((r) => r['r']).sort(), ['false', 'true', 'true', undefined].sort() as string[], 'a null comparison assigns nothing');
  t.strictSame(rowsOf('eval(w = (method == GET))', E).map((r) => r['w']), [undefined, undefined, undefined, undefined], 'bare GET is the field GET (missing): null');
});

t.test('case and match (§2.8)', async (t) => {
  const cs = rowsOf('case { status=500 | k := "err" ; method=GET | k := "get" }', E).map((r) => r['k']).sort();
  t.strictSame(cs, ['err', 'get', 'get'], 'first matching branch wins; no match and no * drops');
  t.strictSame(rowsOf('case { status=500 | k := "err" ; * }', E).length, 4, '* passes through');
  t.throws(() => run('case { status=500 ; }', E) && run('case { }', E), { code: 'E_QUERY' }, 'an empty case is refused');
  const m = (q: string): (string | undefined)[] =>
    rowsOf(q, E)
      .sort((x, y) => Number(x['@timestamp']) - Number(y['@timestamp']))
      .map((r) => r['k']);
  t.strictSame(m('user match { alice => k := "a" ; "b*" => k := "b" ; * => k := "other" }'), ['a', 'b', 'other', 'other']);
  t.strictSame(m('user match { ** => k := "has" }'), ['has', 'has', 'has'], '** needs the field');
  t.strictSame(m('user match { "*" => k := "has" ; * => k := "none" }'), ['has', 'has', 'has', 'none']);
  t.strictSame(m('user match { true => k := "all" }'), ['all', 'all', 'all', 'all'], 'true matches every event');
  t.strictSame(m('status match { in(values=[200, 404]) => k := "ok" ; /^5/ => k := "5xx" }'), ['ok', '5xx', 'ok'], 'a filter function guard gets the field');
  t.strictSame(m('method match { ?verb => k := "param" ; * => k := "no" }'.replace('?verb', '?{verb="POST"}')), ['no', 'param', 'no', 'no'], '?param guards');
  const named = rowsOf('url match { /^\\/(?<first>[a-z]+)/ => * }', E).map((r) => r['first']).sort();
  t.strictSame(named, ['api', 'login', 'star', 'x']);
});

t.test('arrays and named groups (§2.7, §2.15)', async (t) => {
  const arr = [ev('x', { 'a[0]': 'p', 'a[1]': 'q', 'o.b[0].c': 'deep' })];
  t.strictSame(rowsOf('x := a[1] | select(x)', arr), [{ x: 'q' }]);
  t.strictSame(rowsOf('o.b[0].c=deep | count()', arr), [{ _count: '1' }]);
  t.strictSame(rowsOf('array:length(a[]) | select(_length)', arr), [{ _length: '2' }], 'a[] names the array');
  t.strictSame(rowsOf('/(?<verb>GET|POST) \\/(?<path>\\w+)/ | select([verb, path]) | sort(path, order=asc)', E), [
    { verb: 'POST', path: 'api' },
    { verb: 'GET', path: 'login' },
    { verb: 'GET', path: 'star' },
  ], 'a top-level regex extracts');
  t.strictSame(rowsOf('(/(?<v>GET)/ or nothing) | select(v)', E).map((r) => r['v']), [undefined, undefined], 'inside or: no extraction');
});

/** [query, error message pattern] — every error names the line and column. */
const ERRORS: [string, RegExp][] = [
  ['nosuchfn(x)', /^Unknown function "nosuchfn" at line 1, column 1/],
  ['count()\n| groupBy(x, func=count())', /parameter func is not supported in function groupBy at line 2, column 14/],
  ['groupBy()', /function groupBy requires parameter field at line 1, column 1/],
  ['head(limit=x)', /parameter limit of function head must be a whole number or max, not x at line 1, column 6/],
  ['head(200001)', /limit of function head is 200001, above the maximum 200000/],
  ['groupBy(x) | error', /Free-text search is only allowed before the first aggregate function.* at line 1, column 14/],
  ['400 > status', /need a number on the right-hand side/],
  ['head() | accumulate(sum(x))', /^(?!)/],
  ['accumulate(sum(x))', /must follow an aggregate function that orders events/],
  ['x=1 | setTimeInterval(start=1d)', /must be in the query's preamble.* at line 1, column 7/],
  ['/re/q', /Unknown regex flag "q" \(flags are i, m, d, g and F/],
  ['test', /"test" is a function name; write "test" in quotes to search for it as text.* at line 1, column 1/],
  ['GET groupBy', /"groupBy" is a function name/],
  ['case { count() }', /aggregate function count cannot be used inside case or match branches/],
  ['x := /re/', /a regex cannot be used as a value here/],
  ['in(f, values=[a])  | y := in(f, values=[a])', /cannot be used in an expression/],
  // Unknown functions where they are nested, bad parameters and wrong types: the line and column of the name or argument.
  ['x=1\n| groupBy(x,\n    function=[count(), nosuch(y)])', /^Unknown function "nosuch" at line 3, column 24/],
  ['case {\n  a=1 | b := nosuch(c) ;\n  * }', /^Unknown function "nosuch" at line 2, column 14/],
  ['x := 1\n| y := lower(x) + nosuch(x)', /^Unknown function "nosuch" at line 2, column 19/],
  ['x match {\n 1 => nosuch() ;\n * => * }', /^Unknown function "nosuch" at line 2, column 7/],
  ['eval(a = 1,\n b = nosuch(c))', /^Unknown function "nosuch" at line 2, column 6/],
  ['groupBy(x, function={ y := 1 |\n nosuch(y) })', /^Unknown function "nosuch" at line 2, column 2/],
  ['x=1 |\n  round(x, how=sideways)', /parameter how of function round must be one of round, floor, ceil, not sideways at line 2, column 12/],
  ['math:log(x,\n  base=2)', /parameter base is not supported in function math:log at line 2, column 3/],
  ['groupBy(x,\n limit=-5)', /parameter limit of function groupBy must be a whole number or max.* at line 2, column 2/],
  ['bucket(span=1h,\n limit=900)', /parameter limit of function bucket is 900, above the maximum 500 at line 2, column 2/],
  ['splitString(x, by="[",\n index=a)', /parameter index of function splitString must be a number, not a at line 2, column 2/],
  ['concat(x, as=[a,b])', /parameter as of function concat must be a string, not an array at line 1, column 11/],
  ['count(x,\n   distinct=maybe)', /parameter distinct of function count must be true or false, not maybe at line 2, column 4/],
  ['formatTime("%Y", as=y,\n   timezone="Nowhere/X")', /parameter timezone of function formatTime: unknown time zone Nowhere\/X at line 2, column 4/],
  ['x=1\n| groupBy(x, function=lower(y))', /function lower is not an aggregate function and cannot be used here at line 2, column 23/],
  ['time:hour(\n timezone="Mars/Base")', /unknown time zone Mars\/Base at line 2, column 2/],
];

t.test('errors with their position (§1 errors, order rules)', async (t) => {
  for (const [q, re] of ERRORS) {
    if (re.source === '^(?!)') {
      t.doesNotThrow(() => run(q, E), `${q} is valid`);
      continue;
    }
    t.throws(() => run(q, E), { code: 'E_QUERY', message: re }, q);
  }
});
