import t from 'tap';
import { expandSavedCalls, MAX_DEPTH } from '../../../src/query/saved-calls.js';

const saved: Record<string, string> = {
  errors: 'status=500',
  'Slow Requests': 'duration > ?{min=100}',
  top: 'status=?code | count()',
  outer: '$errors() or $"Slow Requests"()',
  loopA: '$loopB()',
  loopB: '$loopA()',
  quoted: 'msg="a $errors() inside"',
};
const lookup = (n: string): string | undefined => saved[n];

t.test('calls are replaced by the saved text; filters in parentheses, pipelines as they are', async (t) => {
  t.equal(expandSavedCalls('$errors() | count()', lookup), '(status=500) | count()');
  t.equal(expandSavedCalls('host=a $errors()', lookup), 'host=a (status=500)');
  t.equal(expandSavedCalls('$"Slow Requests"()', lookup), '(duration > ?{min=100})', 'a parameter the call leaves out stays');
  t.equal(expandSavedCalls('$"Slow Requests"(min=250)', lookup), '(duration > "250")');
  t.equal(expandSavedCalls('$top(code=404) | sort()', lookup), 'status="404" | count() | sort()');
  t.equal(expandSavedCalls('$top( code = "a \\"b\\"" )', lookup), 'status="a \\"b\\"" | count()');
  t.equal(expandSavedCalls('$outer()', lookup), '((status=500) or (duration > ?{min=100}))', 'saved searches call others');
  t.equal(expandSavedCalls('$quoted()', lookup), '(msg="a $errors() inside")', 'text in strings is left alone');
  const plain = 'no calls here $ money';
  t.equal(expandSavedCalls(plain, lookup), plain);
  t.equal(expandSavedCalls('x="$errors()"', lookup), 'x="$errors()"');
});

t.test('problems are query errors naming the saved search', async (t) => {
  t.throws(() => expandSavedCalls('$nope()', lookup), { code: 'E_QUERY', message: /no saved search named "nope"/ });
  t.throws(() => expandSavedCalls('$loopA()', lookup), { code: 'E_QUERY', message: /calls itself \(loopA -> loopB -> loopA\)/ });
  t.throws(() => expandSavedCalls('$errors(', lookup), { code: 'E_QUERY', message: /no closing/ });
  t.throws(() => expandSavedCalls('$errors(x)', lookup), { code: 'E_QUERY', message: /expected "=" after parameter "x"/ });
  const deep: Record<string, string> = {};
  for (let i = 0; i <= MAX_DEPTH + 1; i++) deep[`d${i}`] = `$d${i + 1}()`;
  t.throws(() => expandSavedCalls('$d0()', (n) => deep[n] ?? 'x'), { code: 'E_QUERY', message: /more than 10 deep/ });
  const big: Record<string, string> = { b: 'x'.repeat(40_000) };
  t.throws(() => expandSavedCalls('$b() $b()', (n) => big[n]), { code: 'E_QUERY', message: /longer than 65536/ });
});
