import t from 'tap';
import type { Expr, Filter, Pipeline, Stage } from '../../../src/query/ast.js';
import { lineColumn, queryError } from '../../../src/query/errors.js';
import { MAX_QUERY_BYTES, parseQuery } from '../../../src/query/parser.js';
import { LogsvcError } from '../../../src/lib/errors.js';

/** The tree without spans, for readable structural comparisons. */
function strip(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(strip);
  if (x !== null && typeof x === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(x)) if (k !== 'span') out[k] = strip(v);
    return out;
  }
  return x;
}

const parse = (q: string): unknown => strip(parseQuery(q));

/** The only stage of a one-stage query. */
function stage(q: string): Stage {
  const p = parseQuery(q);
  if (p.stages.length !== 1) throw new Error(`expected one stage in ${q}`);
  return p.stages[0] as Stage;
}

/** The filter of a one-stage filter query, spans stripped. */
function filter(q: string): unknown {
  const s = stage(q);
  if (s.kind !== 'expr') throw new Error(`expected a filter stage in ${q}`);
  return strip(s.expr);
}

/** The value of `x := <expr>`, spans stripped. */
function expr(e: string): unknown {
  const s = stage(`x := ${e}`);
  if (s.kind !== 'assign') throw new Error(`expected an assignment for ${e}`);
  return strip(s.value);
}

/** The arguments of a one-call query, spans stripped. */
function args(q: string): unknown {
  const s = stage(q);
  if (s.kind !== 'expr' || s.expr.k !== 'call') throw new Error(`expected a call in ${q}`);
  return strip(s.expr.call.args);
}

/** The error a query fails with (fails the test when it parses). */
function errorOf(q: string): LogsvcError {
  try {
    parseQuery(q);
  } catch (err) {
    if (err instanceof LogsvcError) return err;
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(q)} not to parse`);
}

const text = (value: string, quoted = false) => ({ k: 'text', value, quoted });
const str = (v: string, quoted = false) => ({ k: 'str', v, quoted });
const cmp = (field: string, op: string, value: unknown) => ({ k: 'compare', field, op, value });
const and = (left: unknown, right: unknown) => ({ k: 'and', left, right });
const or = (left: unknown, right: unknown) => ({ k: 'or', left, right });
const not = (e: unknown) => ({ k: 'not', expr: e });
const id = (name: string) => ({ k: 'ident', name });
const num = (v: number, text = String(v)) => ({ k: 'num', v, text });
const estr = (v: string) => ({ k: 'str', v });
const call = (name: string, ...a: unknown[]) => ({ name, args: a });
const arg = (name: string | null, value: unknown) => ({ name, value });
const bin = (op: string, left: unknown, right: unknown) => ({ k: 'binary', op, left, right });
const all = { k: 'all' };

t.test('an empty query, whitespace or comments only match everything', async (t) => {
  const everything = { stages: [{ kind: 'expr', expr: all }] };
  for (const q of ['', '   ', '\n\t', '// nothing\n', '/* a */ /* b */', '*']) t.same(parse(q), everything, JSON.stringify(q));
  t.same(parseQuery('  ').span, { start: 0, end: 2 });
});

t.test('free text: bare words, quoted strings, regexes', async (t) => {
  t.same(filter('foo'), text('foo'));
  t.same(filter('error*'), text('error*'));
  t.same(filter('192.168.1.1'), text('192.168.1.1'));
  t.same(filter('foo-bar'), text('foo-bar'));
  t.same(filter('déjà-vu'), text('déjà-vu'));
  t.same(filter('"foo bar"'), text('foo bar', true));
  t.same(filter('"and"'), text('and', true), 'quoting makes a keyword text');
  t.same(filter(String.raw`"say \"hi\" \\ a\nb\tc \d"`), text('say "hi" \\ a\nb\tc \\d', true), 'escapes; unknown ones kept');
  t.same(filter('"a // b /* c"'), text('a // b /* c', true), 'no comments inside strings');
  t.same(filter('/foo/'), { k: 'regex', source: 'foo', flags: '' });
  t.same(filter('/foo/imdgs'), { k: 'regex', source: 'foo', flags: 'imdgs' });
  t.same(filter(String.raw`/a\/b\d+/i`), { k: 'regex', source: String.raw`a/b\d+`, flags: 'i' }, 'only \\/ is unescaped');
  t.same(filter('/http:\\/\\/x/'), { k: 'regex', source: 'http://x', flags: '' }, '// inside a regex is no comment');
  t.same(filter('foo bar'), and(text('foo'), text('bar')));
});

t.test('field comparisons', async (t) => {
  for (const op of ['=', '!=', '<', '<=', '>', '>=']) {
    t.same(filter(`status${op}200`), cmp('status', op, str('200')), op);
    t.same(filter(`status ${op} 200`), cmp('status', op, str('200')), `${op} with spaces`);
  }
  t.same(filter('status == 200'), cmp('status', '=', str('200')), '== in a filter is =');
  t.same(filter('url like "*login*"'), cmp('url', 'like', str('*login*', true)));
  t.same(filter('url LIKE x'), cmp('url', 'like', str('x')));
  t.same(filter('field = *'), cmp('field', '=', str('*')));
  t.same(filter('field != *'), cmp('field', '!=', str('*')));
  t.same(filter('name = ""'), cmp('name', '=', str('', true)));
  t.same(filter('url = */login*'), cmp('url', '=', str('*/login*')));
  t.same(filter('user = "Alan Turing"'), cmp('user', '=', str('Alan Turing', true)));
  t.same(filter('loglevel = /error/i'), cmp('loglevel', '=', { k: 'regex', source: 'error', flags: 'i' }));
  t.same(filter('temp < -5'), cmp('temp', '<', str('-5')));
  for (const f of ['@timestamp', '#type', 'a.b[0]', 'a.b[0].c', 'user-agent', 'kubernetes.pod_name', '400']) {
    t.same(filter(`${f}=x`), cmp(f, '=', str('x')), f);
  }
  t.same(filter('#type=accesslog'), cmp('#type', '=', str('accesslog')), 'tags keep their #');
  t.same(filter('"my field" = x'), cmp('my field', '=', str('x')));
  t.same(filter('`my field` = x'), cmp('my field', '=', str('x')));
  t.same(filter('`a\\`b` = x'), cmp('a`b', '=', str('x')));
  t.same(filter('a=1 b=2'), and(cmp('a', '=', str('1')), cmp('b', '=', str('2'))));
});

t.test('logic: not binds tightest, then or, then and (juxtaposition is and)', async (t) => {
  const [foo, bar, baz] = [text('foo'), text('bar'), text('baz')];
  t.same(filter('foo and not bar or baz'), and(foo, or(not(bar), baz)));
  t.same(filter('foo or not bar and baz'), and(or(foo, not(bar)), baz));
  t.same(filter('a or b c'), and(or(text('a'), text('b')), text('c')), 'juxtaposition is and: looser than or');
  t.same(filter('a b or c d'), and(text('a'), and(or(text('b'), text('c')), text('d'))));
  t.same(filter('not foo bar'), and(not(foo), bar));
  t.same(filter('foo not statuscode=200'), and(foo, not(cmp('statuscode', '=', str('200')))));
  t.same(filter('foo AND bar Or baz'), and(foo, or(bar, baz)), 'keywords are case-insensitive');
  t.same(filter('!foo'), not(foo));
  t.same(filter('! foo'), not(foo));
  t.same(filter('NOT NOT foo'), not(not(foo)));
  t.same(filter('(foo or bar) baz'), and(or(foo, bar), baz));
  t.same(filter('foo (bar)'), { k: 'call', call: call('foo', arg(null, id('bar'))) }, 'a name before ( is a call, even with a space');
  t.same(filter('foo* (bar or baz)'), and(text('foo*'), or(bar, baz)), 'a word that cannot name a function is text');
  t.same(filter('not (foo or bar)'), not(or(foo, bar)));
  t.same(filter('a or b or c'), or(text('a'), or(text('b'), text('c'))));
});

t.test('function calls and their arguments', async (t) => {
  t.same(filter('count()'), { k: 'call', call: call('count') });
  t.same(filter('count ( )'), { k: 'call', call: call('count') });
  t.same(args('groupBy(status)'), [arg(null, id('status'))]);
  t.same(args('groupBy(field=[a,b], function=[count(), avg(x)], limit=max)'), [
    arg('field', { k: 'array', items: [id('a'), id('b')] }),
    arg('function', { k: 'array', items: [{ k: 'call', call: call('count') }, { k: 'call', call: call('avg', arg(null, id('x'))) }] }),
    arg('limit', id('max')),
  ]);
  t.same(args('timechart(span=1h, function=avg(rt))'), [arg('span', id('1h')), arg('function', { k: 'call', call: call('avg', arg(null, id('rt'))) })]);
  t.same(args('regex("(?<user>\\\\w+)@", field=email)'), [arg(null, estr('(?<user>\\w+)@')), arg('field', id('email'))]);
  t.same(args('in(status, values=["200","3*"])'), [arg(null, id('status')), arg('values', { k: 'array', items: [estr('200'), estr('3*')] })]);
  t.same(args('top([a,b], limit=5)'), [arg(null, { k: 'array', items: [id('a'), id('b')] }), arg('limit', num(5))]);
  t.same(args('stats(function=[min(x), max(x)])'), [
    arg('function', { k: 'array', items: [{ k: 'call', call: call('min', arg(null, id('x'))) }, { k: 'call', call: call('max', arg(null, id('x'))) }] }),
  ]);
  t.same(args('test(a > b)'), [arg(null, bin('>', id('a'), id('b')))]);
  t.same(args('test(x = 5)'), [arg(null, bin('==', id('x'), num(5)))], 'the condition of test() is never name=value');
  t.same(args('if(x > 5, then="big", else="small")'), [arg(null, bin('>', id('x'), num(5))), arg('then', estr('big')), arg('else', estr('small'))]);
  t.same(args('if(x = 5, then=1, else=2)'), [arg(null, bin('==', id('x'), num(5))), arg('then', num(1)), arg('else', num(2))]);
  t.same(args('eval(x = a + b)'), [arg('x', bin('+', id('a'), id('b')))], 'other functions take name=value');
  t.same(args('format("%s-%s", field=[a,b], as=c)'), [arg(null, estr('%s-%s')), arg('field', { k: 'array', items: [id('a'), id('b')] }), arg('as', id('c'))]);
  t.same(args('percentile(rt, percentiles=[50, 99.9])'), [arg(null, id('rt')), arg('percentiles', { k: 'array', items: [num(50), num(99.9, '99.9')] })]);
  t.same(args('groupBy(x, function={ count() | x := _count * 2 })'), [
    arg(null, id('x')),
    arg('function', {
      k: 'block',
      pipeline: {
        stages: [
          { kind: 'expr', expr: { k: 'call', call: call('count') } },
          { kind: 'assign', target: 'x', value: bin('*', id('_count'), num(2)) },
        ],
      },
    }),
  ]);
  t.same(args('groupBy(function=[])'), [arg('function', { k: 'array', items: [] })]);
  t.same(args('cidr(ip, subnet=10.0.0.0/8)'), [arg(null, id('ip')), arg('subnet', id('10.0.0.0/8'))], 'an unquoted CIDR is one word');
  t.same(args('in(x, values=[a*, *b*, 3*, *])'), [arg(null, id('x')), arg('values', { k: 'array', items: [id('a*'), id('*b*'), id('3*'), id('*')] })]);
  t.same(filter('text:contains(string=x, substring="y")'), { k: 'call', call: call('text:contains', arg('string', id('x')), arg('substring', estr('y'))) });
  t.same(filter('$"My Query"()'), { k: 'call', call: call('$My Query') }, 'saved queries');
  t.same(filter('$other(a=1)'), { k: 'call', call: call('$other', arg('a', num(1))) });
});

t.test('negated calls in filter position', async (t) => {
  t.same(filter('!in(x, values=[a])'), not({ k: 'call', call: call('in', arg(null, id('x')), arg('values', { k: 'array', items: [id('a')] })) }));
  t.same(filter('not cidr(ip, subnet="10.0.0.0/8")'), not({ k: 'call', call: call('cidr', arg(null, id('ip')), arg('subnet', estr('10.0.0.0/8'))) }));
  t.same(filter('foo !regex("x")'), and(text('foo'), not({ k: 'call', call: call('regex', arg(null, estr('x'))) })));
});

t.test('expressions: precedence, literals, names', async (t) => {
  t.same(expr('1 + 2 * 3'), bin('+', num(1), bin('*', num(2), num(3))));
  t.same(expr('(1 + 2) * 3'), bin('*', bin('+', num(1), num(2)), num(3)));
  t.same(expr('a - b - c'), bin('-', bin('-', id('a'), id('b')), id('c')), 'left-associative');
  t.same(expr('a / b % c'), bin('%', bin('/', id('a'), id('b')), id('c')));
  t.same(expr('a or b and c == d + 1'), bin('or', id('a'), bin('and', id('b'), bin('==', id('c'), bin('+', id('d'), num(1))))));
  t.same(expr('a AND b OR c'), bin('or', bin('and', id('a'), id('b')), id('c')));
  for (const op of ['==', '!=', '<', '<=', '>', '>=']) t.same(expr(`a ${op} b`), bin(op, id('a'), id('b')), op);
  t.same(expr('a = b'), bin('==', id('a'), id('b')), '= compares in an expression');
  t.same(expr('-3'), { k: 'unary', op: '-', expr: num(3) });
  t.same(expr('!a'), { k: 'unary', op: '!', expr: id('a') });
  t.same(expr('not a == b'), bin('==', { k: 'unary', op: 'not', expr: id('a') }, id('b')), 'not binds tighter than ==');
  t.same(expr('- -a'), { k: 'unary', op: '-', expr: { k: 'unary', op: '-', expr: id('a') } });
  t.same(expr('12'), num(12));
  t.same(expr('1.5'), num(1.5, '1.5'));
  t.same(expr('1e3'), num(1000, '1e3'));
  t.same(expr('2.5E-1'), num(0.25, '2.5E-1'));
  for (const w of ['1h', '15min', '1.5h', '2d']) t.same(expr(w), id(w), `${w} is a word`);
  for (const n of ['status', '@timestamp', '#type', 'a.b[0]', 'a.b[0].c', 'user-agent', 'kubernetes.pod_name', '_count']) t.same(expr(n), id(n), n);
  t.same(expr('a - b'), bin('-', id('a'), id('b')), 'spaced minus subtracts');
  t.same(expr('a-1'), bin('-', id('a'), num(1)), 'minus before a digit subtracts');
  t.same(expr('`x y`'), id('x y'));
  t.same(expr('"s"'), estr('s'));
  t.same(expr('/re/i'), { k: 'regex', source: 're', flags: 'i' });
  t.same(expr('a/2'), bin('/', id('a'), num(2)), '/ after an operand divides');
  t.same(expr('a /* c */ / 2 // end'), bin('/', id('a'), num(2)));
  t.same(expr('?p + 1'), bin('+', { k: 'param', name: 'p', default: null }, num(1)));
  t.same(expr('[1, "a", [b]]'), { k: 'array', items: [num(1), estr('a'), { k: 'array', items: [id('b')] }] });
  t.same(expr('$saved(a=1) + "a\\rb"'), bin('+', { k: 'call', call: call('$saved', arg('a', num(1))) }, estr('a\rb')));
  t.same(expr('min(y)'), { k: 'call', call: call('min', arg(null, id('y'))) });
  t.same(expr('lower(a) + 1'), bin('+', { k: 'call', call: call('lower', arg(null, id('a'))) }, num(1)));
});

t.test('assignment, field operator, case, match and list stages', async (t) => {
  t.same(parse('x := min(y)'), { stages: [{ kind: 'assign', target: 'x', value: { k: 'call', call: call('min', arg(null, id('y'))) } }] });
  t.same(parse('x:=1'), { stages: [{ kind: 'assign', target: 'x', value: num(1) }] });
  t.same(parse('`my key` := value * 2'), { stages: [{ kind: 'assign', target: 'my key', value: bin('*', id('value'), num(2)) }] });
  t.same(parse('ip =~ cidr(subnet="1.2.3.0/24")'), { stages: [{ kind: 'fieldOp', field: 'ip', call: call('cidr', arg('subnet', estr('1.2.3.0/24'))) }] });
  t.same(parse('case { #type=x | y:=1 ; * | y:=2 }'), {
    stages: [
      {
        kind: 'case',
        branches: [
          { stages: [{ kind: 'expr', expr: cmp('#type', '=', str('x')) }, { kind: 'assign', target: 'y', value: num(1) }] },
          { stages: [{ kind: 'expr', expr: all }, { kind: 'assign', target: 'y', value: num(2) }] },
        ],
      },
    ],
  });
  t.same(parse('case { a ; b ; }'), parse('case { a ; b }'), 'a trailing ; is allowed');
  t.same(parse('CASE{a}'), { stages: [{ kind: 'case', branches: [{ stages: [{ kind: 'expr', expr: text('a') }] }] }] });
  t.same(parse('case'), { stages: [{ kind: 'expr', expr: text('case') }] }, 'without { case is a word');
  t.same(parse('x match { "v" => a | b ; /re/i => c ; 200 => d; web* => f ; * => e ; }'), {
    stages: [
      {
        kind: 'match',
        field: 'x',
        arms: [
          { pattern: { k: 'str', v: 'v', quoted: true }, body: { stages: [{ kind: 'expr', expr: text('a') }, { kind: 'expr', expr: text('b') }] } },
          { pattern: { k: 'regex', source: 're', flags: 'i' }, body: { stages: [{ kind: 'expr', expr: text('c') }] } },
          { pattern: { k: 'str', v: '200', quoted: false }, body: { stages: [{ kind: 'expr', expr: text('d') }] } },
          { pattern: { k: 'str', v: 'web*', quoted: false }, body: { stages: [{ kind: 'expr', expr: text('f') }] } },
          { pattern: { k: 'any' }, body: { stages: [{ kind: 'expr', expr: text('e') }] } },
        ],
      },
    ],
  });
  t.same(parse('foo match bar'), { stages: [{ kind: 'expr', expr: and(text('foo'), and(text('match'), text('bar'))) }] });
  t.same(parse('[min(x), max(x)]'), { stages: [{ kind: 'list', calls: [call('min', arg(null, id('x'))), call('max', arg(null, id('x')))] }] });
  t.same(parse('a | groupBy(b) | sort()'), {
    stages: [
      { kind: 'expr', expr: text('a') },
      { kind: 'expr', expr: { k: 'call', call: call('groupBy', arg(null, id('b'))) } },
      { kind: 'expr', expr: { k: 'call', call: call('sort') } },
    ],
  });
});

t.test('query parameters', async (t) => {
  t.same(filter('?host'), { k: 'param', name: 'host', default: null });
  t.same(filter('?{env=prod}'), { k: 'param', name: 'env', default: 'prod' });
  t.same(filter('?{ q = "a } b" }'), { k: 'param', name: 'q', default: 'a } b' });
  t.same(filter('?{x}'), { k: 'param', name: 'x', default: null });
  t.same(filter('host = ?h'), cmp('host', '=', { k: 'param', name: 'h', default: null }));
  t.same(filter('host = ?{h=web*}'), cmp('host', '=', { k: 'param', name: 'h', default: 'web*' }));
  t.same(expr('?{n=5} * 2'), bin('*', { k: 'param', name: 'n', default: '5' }, num(2)));
});

t.test('comments wherever whitespace is allowed', async (t) => {
  const q = `// leading
foo /* inline */ and bar // trailing
| /* before a stage */ groupBy( // inside a call
  x /* after an arg */, limit=5 )
/* end */`;
  t.same(parse(q), {
    stages: [
      { kind: 'expr', expr: and(text('foo'), text('bar')) },
      { kind: 'expr', expr: { k: 'call', call: call('groupBy', arg(null, id('x')), arg('limit', num(5))) } },
    ],
  });
  t.same(filter('url = "http://x" // c'), cmp('url', '=', str('http://x', true)));
});

t.test('spans cover each node', async (t) => {
  const q = 'foo  and (a or b) | x := (1 + 2) * f(y, z=[1]) | #t = "v w"';
  const p: Pipeline = parseQuery(q);
  const slice = (s: { span: { start: number; end: number } }) => q.slice(s.span.start, s.span.end);
  t.equal(slice(p), q);
  const [s0, s1, s2] = p.stages as [Stage, Stage, Stage];
  t.equal(slice(s0), 'foo  and (a or b)');
  t.equal(slice(s1), 'x := (1 + 2) * f(y, z=[1])');
  t.equal(slice(s2), '#t = "v w"');
  if (s0.kind !== 'expr' || s0.expr.k !== 'and') throw new Error('stage 0');
  t.equal(slice(s0.expr.left), 'foo');
  t.equal(slice(s0.expr.right), '(a or b)', 'a parenthesized node includes its parentheses');
  if (s1.kind !== 'assign' || s1.value.k !== 'binary') throw new Error('stage 1');
  const right = s1.value.right as Expr;
  t.equal(slice(s1.value.left), '(1 + 2)');
  t.equal(slice(right), 'f(y, z=[1])');
  if (right.k !== 'call') throw new Error('call');
  t.equal(slice(right.call), 'f(y, z=[1])');
  t.equal(slice(right.call.args[1] as { span: { start: number; end: number } }), 'z=[1]');
  t.equal(slice(right.call.args[1]?.value as Expr), '[1]');
  if (s2.kind !== 'expr' || s2.expr.k !== 'compare') throw new Error('stage 2');
  t.equal(slice(s2.expr.value), '"v w"');
  const neg = stage('!in(x, values=[a])');
  if (neg.kind !== 'expr') throw new Error('neg');
  t.same(neg.expr.span, { start: 0, end: 18 });
  const n = neg.expr as Extract<Filter, { k: 'not' }>;
  t.same(n.expr.span, { start: 1, end: 18 });
  const m = stage('f match { "a" => x | y ; * => z }');
  if (m.kind !== 'match') throw new Error('match');
  t.same(m.span, { start: 0, end: 33 });
  t.same(m.arms[0]?.span, { start: 10, end: 22 });
});

t.test('errors name what was expected and found, with line, column and a caret block', async (t) => {
  const cases: [string, string][] = [
    ['"abc', 'Unclosed string: expected a closing " before the end of the query at line 1, column 1\n```\n"abc\n^^^^\n```'],
    ['groupBy(x', 'Expected ")" to close the call of groupBy, found end of query at line 1, column 10\n```\ngroupBy(x\n         ^\n```'],
    ['(a or b', 'Expected ")" to close the "(" opened at line 1, column 1, found end of query at line 1, column 8\n```\n(a or b\n       ^\n```'],
    ['a | | b', 'Expected a filter, a function call or an assignment after "|", found "|" at line 1, column 5\n```\na | | b\n    ^\n```'],
    ['| a', 'Expected a filter, a function call or an assignment at the start of the query, found "|" at line 1, column 1\n```\n| a\n^\n```'],
    ['a |', 'Expected a filter, a function call or an assignment after "|", found end of query at line 1, column 4\n```\na |\n   ^\n```'],
    ['x :=', 'Expected an expression after ":=", found end of query at line 1, column 5\n```\nx :=\n    ^\n```'],
    ['foo § bar', 'Unexpected character "§" (U+00A7) at line 1, column 5\n```\nfoo § bar\n    ^\n```'],
    ['a\n| groupBy(x y)', 'Expected "," or ")" after an argument of groupBy, found "y" at line 2, column 13\n```\n| groupBy(x y)\n            ^\n```'],
    ['foo )', 'Unexpected ")" without a matching "(" at line 1, column 5\n```\nfoo )\n    ^\n```'],
    ['/api/v1', 'Unknown regex flag "v" (flags are i, m, d, g and F; quote text that contains "/") at line 1, column 6\n```\n/api/v1\n     ^\n```'],
  ];
  for (const [q, message] of cases) {
    const err = errorOf(q);
    t.equal(err.message, message, JSON.stringify(q));
    t.equal(err.code, 'E_QUERY');
    t.equal(err.httpStatus, 400);
  }
  t.equal(errorOf('f(x\n\n').message, 'Expected ")" to close the call of f, found end of query at line 1, column 4\n```\nf(x\n   ^\n```', 'end of query points after the last text');
  t.match(errorOf('and foo').message, /^Expected a filter at the start of the query, found "and"/);
  t.match(errorOf('foo or OR bar').message, /^Expected a filter after "or", found "OR" at line 1, column 8/);
  t.match(errorOf('x := * + 1').message, /^Expected an expression after ":=", found "\*"/);
  t.match(errorOf('x := $ 1').message, /^Expected a saved query name after "\$", found whitespace/);
  t.match(errorOf('foo and').message, /^Expected a filter after "and", found end of query at line 1, column 8\n/);
  t.match(errorOf('status =').message, /^Expected a value after "=", found end of query/);
  t.match(errorOf('/abc').message, /^Unclosed regex/);
  t.match(errorOf('a /* b').message, /^Unclosed comment: expected "\*\/" before the end of the query at line 1, column 3/);
  t.match(errorOf('`abc').message, /^Unclosed name/);
  t.match(errorOf('groupBy(a=1, b)').message, /^Only the first argument of groupBy can be unnamed; write this one as name=value at line 1, column 14/);
  t.match(errorOf('f(a, b)').message, /^Only the first argument of f can be unnamed/);
  t.match(errorOf('f(a,)').message, /^Expected an expression after ",", found "\)"/);
  t.match(errorOf('x := [1, 2').message, /^Expected "]" to close the array opened at line 1, column 6, found end of query/);
  t.match(errorOf('f(x={count()').message, /^Expected "\|" or "}" to close the block opened at line 1, column 5, found end of query/);
  t.match(errorOf('case { a ;; b }').message, /^Expected a case branch .* after ";", found ";" at line 1, column 11/);
  t.match(errorOf('case {}').message, /^Expected a case branch .* after "{", found "}"/);
  t.match(errorOf('case { a').message, /^Expected "\|", ";" or "}" to close the case opened at line 1, column 6, found end of query/);
  t.match(errorOf('x match { "a" b }').message, /^Expected "=>" after the match pattern, found "b"/);
  t.match(errorOf('x match { }').message, /^Expected a match pattern/);
  t.match(errorOf('[a]').message, /^Expected a function call after "\[", found "a" at line 1, column 2/);
  t.match(errorOf('foo x := 1').message, /^An assignment ":=" must start a pipeline stage/);
  t.match(errorOf('ip =~ 5').message, /^Expected a function call after "=~", found "5"/);
  t.match(errorOf('x := a +').message, /^Expected an expression after "\+", found end of query/);
  t.match(errorOf("x := 'a'").message, /\(strings are written in double quotes\)/);
  t.match(errorOf('x := a.b(1)').message, /^"a\.b" is not a valid function name/);
  t.match(errorOf('`x`').message, /^Expected a comparison operator/);
  t.match(errorOf('?').message, /^Expected a parameter name after "\?"/);
  t.match(errorOf('?{x').message, /^Expected "}" to close the parameter/);
  t.match(errorOf('foo case { a }').message, /^"case" must start a pipeline stage/);
  t.match(errorOf('a | x := 1 2').message, /^Expected "\|" or the end of the query, found "2"/);
});

t.test('queryError formats the caret block', async (t) => {
  const err = queryError('count()\n| cuont()', { start: 10, end: 15 }, 'Unknown function "cuont"');
  t.equal(err.message, 'Unknown function "cuont" at line 2, column 3\n```\n| cuont()\n  ^^^^^\n```');
  t.equal(err.code, 'E_QUERY');
  t.ok(err instanceof LogsvcError);
  t.same([err.line, err.column, err.span], [2, 3, { start: 10, end: 15 }]);
  t.equal(queryError('ab\ncd', { start: 1, end: 5 }, 'm').message, 'm at line 1, column 2\n```\nab\n ^\n```', 'carets clipped to the line');
  t.equal(queryError('ab', { start: 1, end: 1 }, 'm').message, 'm at line 1, column 2\n```\nab\n ^\n```', 'at least one caret');
  t.equal(queryError('ab', { start: 2, end: 2 }, 'm').message, 'm at line 1, column 3\n```\nab\n  ^\n```', 'the end of the text');
  t.equal(queryError('\tx y', { start: 3, end: 4 }, 'm').message, 'm at line 1, column 4\n```\n\tx y\n\t  ^\n```', 'tabs kept in the padding');
  t.equal(queryError('a\r\nbc\r\n', { start: 4, end: 6 }, 'm').message, 'm at line 2, column 2\n```\nbc\n ^\n```', 'CRLF');
  const long = 'x'.repeat(1000) + 'BAD' + 'y'.repeat(1000);
  const lines = queryError(long, { start: 1000, end: 1003 }, 'm').message.split('\n');
  t.equal(lines[0], 'm at line 1, column 1001');
  t.ok((lines[2] as string).length < 200, 'a long line is shown as a window');
  t.equal((lines[2] as string).indexOf('BAD'), (lines[3] as string).indexOf('^^^'), 'carets under the span in the window');
  t.same(lineColumn('a\nbc\n', 0), { line: 1, column: 1 });
  t.same(lineColumn('a\nbc\n', 3), { line: 2, column: 2 });
  t.same(lineColumn('a\nbc\n', 5), { line: 3, column: 1 });
});

t.test('nesting is bounded at 100 levels without overflowing the stack', async (t) => {
  const nest = (n: number) => '('.repeat(n) + 'a' + ')'.repeat(n);
  t.same(filter(nest(100)), text('a'));
  t.match(errorOf(nest(101)).message, /^The query nests more than 100 levels at line 1, column 101\n/);
  t.match(errorOf('('.repeat(60_000)).message, /query nests more than 100 levels/);
  t.match(errorOf('('.repeat(100_000)).message, /^The query is 100000 bytes long/, '100k levels are over the size bound; no RangeError');
  t.match(errorOf('x := ' + '('.repeat(60_000)).message, /query nests more than 100 levels/);
  t.match(errorOf('f('.repeat(30_000)).message, /query nests more than 100 levels/);
  t.match(errorOf('x := ' + '['.repeat(60_000)).message, /query nests more than 100 levels/);
  t.match(errorOf('f(x={'.repeat(12_000)).message, /query nests more than 100 levels/);
  t.match(errorOf('!'.repeat(60_000) + 'a').message, /query nests more than 100 levels/, 'prefix operators count');
  t.match(errorOf('x := ' + '-'.repeat(60_000) + '1').message, /query nests more than 100 levels/);
  t.match(errorOf('case {'.repeat(10_000)).message, /query nests more than 100 levels/);
});

t.test('size bound and a big query', async (t) => {
  t.match(errorOf('a'.repeat(MAX_QUERY_BYTES + 1)).message, /^The query is 65537 bytes long; the limit is 65536 bytes \(64 KiB\)/);
  t.match(errorOf('é'.repeat(MAX_QUERY_BYTES / 2 + 1)).message, /^The query is 65538 bytes long/, 'counted in UTF-8 bytes');
  t.equal(parseQuery('a'.repeat(MAX_QUERY_BYTES)).stages.length, 1);

  const terms = Array.from({ length: 2600 }, (_, i) => `status=${i}`).join(' or ');
  const stages = Array.from({ length: 700 }, (_, i) => `x${i} := a + ${i} * f(b, c=[1, 2])`).join('\n| ');
  const q = `${terms}\n| ${stages}`;
  t.ok(q.length > 60_000 && q.length <= MAX_QUERY_BYTES, `query of ${q.length} chars`);
  const started = performance.now();
  const p = parseQuery(q);
  const ms = performance.now() - started;
  t.equal(p.stages.length, 701);
  t.ok(ms < 15_000, `parsed in ${ms.toFixed(0)} ms (quadratic parsing would take minutes)`);
  let depth = 0;
  for (let f: Filter = (p.stages[0] as Extract<Stage, { kind: 'expr' }>).expr; f.k === 'or'; f = f.right) depth++;
  t.equal(depth, 2599, 'the or-chain groups to the right');
});
