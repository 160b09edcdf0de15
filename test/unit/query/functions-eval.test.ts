import t from 'tap';
import { col, ev, rowsOf, run, type Fields } from './driver.js';

const E: Fields[] = [ev('r1', { a: '6', b: '4', s: 'Hello', k: 'x' }, 1000), ev('r2', { a: '1.5', b: '0', s: 'WORLD' }, 2000), ev('r3', { b: '2', s: 'x y' }, 3000)];

function by(rows: Fields[], f: string): (string | undefined)[] {
  return [...rows].sort((x, y) => Number(x['@timestamp']) - Number(y['@timestamp'])).map((r) => r[f]);
}

t.test(':= arithmetic, literals, number printing; no value assigns nothing and keeps the event', async (t) => {
  const rows = rowsOf('x := a * 2 + b / 4', E);
  t.strictSame(by(rows, 'x'), ['13', '3', undefined], 'r3 has no a: kept, x not created');
  t.strictSame(by(rowsOf('x := a / b', E), 'x'), ['1.5', undefined, undefined], 'division by zero gives no value: kept');
  t.strictSame(by(rowsOf('b := a * 100', E), 'b'), ['600', '150', '2'], 'no value: an existing field keeps its value');
  t.strictSame(by(rowsOf('eval(x = a * 2, y = nosuch + 1, z = 1)', E), 'z'), ['1', '1', '1'], 'eval: the next assignments still run');
  t.strictSame(by(rowsOf('x := (a - b) % 4', E), 'x'), ['2', '1.5', undefined]);
  t.strictSame(by(rowsOf('x := -a', E), 'x'), ['-6', '-1.5', undefined]);
  t.strictSame(by(rowsOf('x := "lit"', E), 'x'), ['lit', 'lit', 'lit']);
  t.strictSame(by(rowsOf('x := 0.1 + 0.2', E), 'x'), ['0.3', '0.3', '0.3']);
  t.strictSame(by(rowsOf('x := s', E), 'x'), ['Hello', 'WORLD', 'x y'], 'a bare name reads the field');
  t.strictSame(by(rowsOf('x := a > b', E), 'x'), ['true', 'true', undefined], 'a comparison with a missing side is null: nothing assigned');
  t.strictSame(by(rowsOf('x := s > "A"', E), 'x'), [undefined, undefined, undefined], 'orderings on non-numbers are null');
  t.strictSame(by(rowsOf('eval(y = b * 10)', E), 'y'), ['40', '0', '20']);
  t.strictSame(by(rowsOf('a := "2" | c := 4 / lower(a)', E), 'c'), ['2', '2', '2'], 'api-facts: values are untyped');
  t.strictSame(run('groupBy(k) | y := _count * 2', E).query.fieldOrder, ['k', '_count', 'y']);
});

t.test(':= with a function call sets as=; field =~ fn() sets field=', async (t) => {
  t.strictSame(rowsOf('m := max(a)', E), [{ m: '6' }]);
  t.strictSame(by(rowsOf('n := length(s)', E), 'n'), ['5', '5', '3']);
  t.strictSame(by(rowsOf('l := lower(s)', E), 'l'), ['hello', 'world', 'x y']);
  t.strictSame(by(rowsOf('l := upper(field=s)', E), 'l'), ['HELLO', 'WORLD', 'X Y']);
  t.strictSame(by(rowsOf('c := concat([s, k])', E), 'c'), ['Hellox', 'WORLD', 'x y']);
  t.strictSame(by(rowsOf('x := if(a > 2, then="big", else="small")', E), 'x'), ['big', 'small', 'small']);
  t.strictSame(by(rowsOf('x := coalesce([k, s])', E), 'x'), ['x', 'WORLD', 'x y']);
  t.strictSame(by(rowsOf('t := now()', E), 't'), [String(1_585_145_700_394), String(1_585_145_700_394), String(1_585_145_700_394)]);
  t.strictSame(by(rowsOf('s =~ lowercase()', E), 's'), ['hello', 'world', 'x y']);
  t.throws(() => run('x := max(a, as=y)', E), { code: 'E_QUERY', message: /already has a as argument|already has an as/ });
});

t.test('case: first branch that emits wins, changes of failed branches are undone, no match drops', async (t) => {
  const q = 'case { a > 5 | tag := "big" ; b = 0 | tag := "zero" ; s = x* | tag := "x" }';
  t.strictSame(by(rowsOf(q, E), 'tag'), ['big', 'zero', 'x']);
  const q2 = 'case { tag := "first" | a > 100 ; * | other := "yes" }';
  const rows = rowsOf(q2, E);
  t.strictSame(by(rows, 'tag'), [undefined, undefined, undefined], 'a branch that drops the event leaves no trace');
  t.strictSame(by(rows, 'other'), ['yes', 'yes', 'yes']);
  t.strictSame(by(rowsOf('case { a > 5 ; b = 0 }', E), '@rawstring'), ['r1', 'r2'], 'no match, no * branch: dropped');
  t.throws(() => run('case { a > 5 | count() ; * }', E), { code: 'E_QUERY', message: /aggregate function count cannot be used inside case/ });
});

t.test('match: string (wildcard), regex (extracts), * ; no match drops', async (t) => {
  const q = 's match { "Hello" => m := "h" ; /^(?<first>W)/ => m := "w" ; * => m := "other" }';
  const rows = rowsOf(q, E);
  t.strictSame(by(rows, 'm'), ['h', 'w', 'other']);
  t.strictSame(by(rows, 'first'), [undefined, 'W', undefined]);
  t.strictSame(by(rowsOf('s match { H* => m := 1 ; x* => m := 2 }', E), 'm'), ['1', '2']);
  t.throws(() => run('s match { * => groupBy(a) }', E), { code: 'E_QUERY', message: /cannot be used inside case or match/ });
});

t.test('test() and if() inside filters and expressions', async (t) => {
  t.strictSame(by(rowsOf('test(a == 6 or b == 2)', E), '@rawstring'), ['r1', 'r3']);
  t.strictSame(by(rowsOf('test(a < b)', E), '@rawstring'), [], 'r2: 1.5 < 0 false; r3: a missing');
  t.strictSame(by(rowsOf('test(s != "Hello")', E), '@rawstring'), ['r2', 'r3']);
  t.strictSame(by(rowsOf('test(nosuch != "x")', E), '@rawstring'), [], 'a missing field is null in expressions: test() drops the event');
  t.strictSame(by(rowsOf('test(s == "x y")', E), '@rawstring'), ['r3']);
  t.strictSame(by(rowsOf('!test(a > 2)', E), '@rawstring'), ['r2', 'r3']);
});

t.test('default, rename, drop', async (t) => {
  t.strictSame(by(rowsOf('default(value="-", field=[a, k])', E), 'a'), ['6', '1.5', '-']);
  t.strictSame(by(rowsOf('default(field=k, value="none")', E), 'k'), ['x', 'none', 'none']);
  const empty = [ev('e', { v: '' }), ev('f', {})];
  t.strictSame(col(rowsOf('default(value="0", field=v, replaceEmpty=true) | sort(@rawstring, order=asc)', empty), 'v'), ['0', '0']);
  t.strictSame(col(rowsOf('default(value="0", field=v) | sort(@rawstring, order=asc)', empty), 'v'), ['', '0']);
  const r = rowsOf('rename(a, as=alpha)', E);
  t.strictSame(by(r, 'alpha'), ['6', '1.5', undefined]);
  t.strictSame(by(r, 'a'), [undefined, undefined, undefined]);
  t.strictSame(by(rowsOf('rename(field=[[a, x], [b, y]])', E), 'y'), ['4', '0', '2']);
  t.strictSame(by(rowsOf('newname := rename(s)', E), 'newname'), ['Hello', 'WORLD', 'x y']);
  const d = rowsOf('drop([a, b])', E);
  t.strictSame(by(d, 'a'), [undefined, undefined, undefined]);
  t.strictSame(by(d, 's'), ['Hello', 'WORLD', 'x y']);
  t.throws(() => run('rename(a)', E), { code: 'E_QUERY', message: /requires parameter as/ });
});
