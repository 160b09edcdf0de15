import t from 'tap';
import { compileQuery } from '../../../src/query/compile.js';
import { QueryError } from '../../../src/query/errors.js';
import { ctxOf } from './driver.js';

/** The error compiling `q` throws, with the text its span covers. */
function errorOf(q: string, args?: Record<string, string>): { message: string; at: string; err: QueryError } {
  try {
    compileQuery(q, { ctx: ctxOf(), ...(args === undefined ? {} : { args }) });
  } catch (err) {
    if (!(err instanceof QueryError)) throw err;
    return { message: err.message.split('\n')[0]!, at: q.slice(err.span.start, err.span.end), err };
  }
  throw new Error(`no error for ${q}`);
}

t.test('unknown function: the span is the name', async (t) => {
  const e = errorOf('foo | cuont()');
  t.match(e.message, /^Unknown function "cuont" at line 1, column 7/);
  t.equal(e.at, 'cuont');
  t.equal(e.err.code, 'E_QUERY');
  t.equal(e.err.httpStatus, 400);
  t.match(e.err.message, /```\n/);
  t.equal(errorOf('x := nope(a)').at, 'nope');
  t.equal(errorOf('groupBy(a, function=nope())').at, 'nope');
  t.equal(errorOf('test(nope(a) > 1)').at, 'nope');
});

t.test('unknown, repeated, mistyped and missing parameters', async (t) => {
  let e = errorOf('timechart(func=count())');
  t.match(e.message, /^parameter func is not supported in function timeChart/);
  t.equal(e.at, 'func=count()');
  e = errorOf('groupBy(a, limit=lots)');
  t.match(e.message, /parameter limit of function groupBy must be a whole number or max/);
  t.equal(e.at, 'limit=lots');
  e = errorOf('count(a, distinct=maybe)');
  t.match(e.message, /parameter distinct of function count must be true or false/);
  e = errorOf('groupBy()');
  t.match(e.message, /function groupBy requires parameter field/);
  t.equal(e.at, 'groupBy()');
  e = errorOf('head(1, limit=2)');
  t.match(e.message, /parameter limit is given more than once in function head/);
  t.equal(e.at, 'limit=2');
  e = errorOf('duration()');
  t.match(e.message, /function duration requires parameter duration/);
  e = errorOf('groupBy(a, function=avg)');
  t.match(e.message, /parameter function of function groupBy must be an aggregate function/);
  e = errorOf('groupBy(a, function=lowercase(a))');
  t.match(e.message, /function lowercase is not an aggregate function/);
  e = errorOf('sort(x, type=weird)');
  t.match(e.message, /must be number, string, hex or any/);
});

t.test('query parameters without a value name the parameter and point at it', async (t) => {
  const e = errorOf('status=200 | method=?method');
  t.match(e.message, /query parameter method has no value/);
  t.equal(e.at, '?method');
  t.doesNotThrow(() => compileQuery('method=?method', { ctx: ctxOf(), args: { method: 'GET' } }));
  t.equal(errorOf('head(?{n})').at.startsWith('?'), true);
});

t.test('aggregates where they cannot be, functions where they do not fit', async (t) => {
  let e = errorOf('case { a=1 | count() ; * }');
  t.match(e.message, /aggregate function count cannot be used inside case or match branches/);
  t.equal(e.at, 'count()');
  e = errorOf('x match { * => [count(), max(y)] }');
  t.match(e.message, /aggregate functions cannot be used inside case or match/);
  e = errorOf('a=1 or groupBy(x)');
  t.match(e.message, /function groupBy cannot be used inside a filter expression/);
  e = errorOf('x := 1 + groupBy(y)');
  t.match(e.message, /function groupBy cannot be used in an expression/);
  e = errorOf('status > abc');
  t.match(e.message, /need a number/);
  t.equal(e.at, 'abc');
  e = errorOf('url < /x/');
  t.match(e.message, /regex can only be compared with = or !=/);
});

t.test('regex problems point at the regex', async (t) => {
  let e = errorOf('a=1 | /(x+)\\1/');
  t.match(e.message, /cannot be run in linear time/);
  t.equal(e.at, '/(x+)\\1/');
  e = errorOf('url=/[a-/');
  t.match(e.message, /invalid regex|unterminated/);
  e = errorOf('regex("a", flags=q)');
  t.match(e.message, /unknown regex flag 'q'/);
  t.equal(e.at, 'flags=q');
});

t.test('the result of a successful compile', async (t) => {
  const q = compileQuery('', { ctx: ctxOf() });
  t.equal(q.text, '*');
  t.equal(q.isAggregate, false);
  t.equal(q.fieldOrder, null);
  t.equal(q.stages.at(-1)!.kind, 'agg');
  t.equal(q.stages.at(-1)!.name, 'tail');
  t.strictSame(q.extraData, {});
  t.equal(compileQuery('   ', { ctx: ctxOf() }).text, '*');
  t.equal(compileQuery('count()', { ctx: ctxOf() }).isAggregate, true);
  t.equal(compileQuery('Count() | TAIL(3)', { ctx: ctxOf() }).stages.length, 2, 'function names are case-insensitive');
});
