import t from 'tap';
import { fold } from '../../../src/query/casefold.js';
import { formatNumber, parseNumber, truthy } from '../../../src/query/values.js';
import { compileWildcard } from '../../../src/query/wildcard.js';
import { forEachToken } from '../../../src/segments/bloom.js';

t.test('parseNumber: plain decimals only', async (t) => {
  t.equal(parseNumber('42'), 42);
  t.equal(parseNumber('-3.5'), -3.5);
  t.equal(parseNumber(' 7 '), 7);
  t.equal(parseNumber('1e3'), 1000);
  t.equal(parseNumber('.5'), 0.5);
  t.equal(parseNumber('+2'), 2);
  for (const bad of ['', ' ', 'abc', '0x1f', 'NaN', 'Infinity', '1,5', '-', '1e', undefined]) t.equal(parseNumber(bad), undefined, String(bad));
});

t.test('formatNumber: as the product prints numbers', async (t) => {
  t.equal(formatNumber(12), '12');
  t.equal(formatNumber(12.0), '12');
  t.equal(formatNumber(-0), '0');
  t.equal(formatNumber(2.5), '2.5');
  t.equal(formatNumber(0.1 + 0.2), '0.3');
  t.equal(formatNumber(1 / 3), '0.333333333333333');
  t.equal(formatNumber(1234567.891), '1234567.891');
  t.equal(formatNumber(1e21), '1000000000000000000000');
  t.equal(formatNumber(1.5e-7), '0.00000015');
  t.equal(formatNumber(123456789012.5), '123456789012.5');
});

t.test('truthy', async (t) => {
  for (const v of ['true', '1', 'x', '-1']) t.equal(truthy(v), true, v);
  for (const v of ['false', '', '0', undefined]) t.equal(truthy(v), false, String(v));
});

t.test('wildcards: anchored and not, case folding, no backtracking', async (t) => {
  const a = (p: string, s: string, ignoreCase = false): boolean => compileWildcard(p, { anchored: true, ignoreCase })(s);
  const u = (p: string, s: string): boolean => compileWildcard(p, { anchored: false, ignoreCase: true })(s);
  t.ok(a('*login*', '/x/login/y'));
  t.ok(a('*Turing', 'Alan Turing'));
  t.notOk(a('*Turing', 'Alan Turing!'));
  t.ok(a('a*b*c', 'abc'));
  t.ok(a('a*b*c', 'axxbyyc'));
  t.notOk(a('a*b*c', 'acb'));
  t.notOk(a('ab*ba', 'aba'), 'prefix and suffix may not overlap');
  t.ok(a('*', ''));
  t.ok(a('**', 'x'));
  t.ok(a('ABC', 'abc', true));
  t.ok(u('err*timeout', 'an ERROR then a TIMEOUT'));
  t.notOk(u('timeout*err', 'an ERROR then a TIMEOUT'));
  const long = 'a'.repeat(100_000);
  const t0 = Date.now();
  t.notOk(a('*a*a*a*a*a*b', long));
  t.ok(Date.now() - t0 < 500);
});

t.test('fold matches the bloom filter\'s folding', async (t) => {
  for (const s of ['Hello', 'ÄÖÜ ẞ', 'ΣΑΣ', 'İstanbul', 'K KELVIN']) {
    const tokens: string[] = [];
    forEachToken(s, (x) => tokens.push(x));
    const mine: string[] = [];
    forEachToken(fold(s), (x) => mine.push(x));
    t.strictSame(mine, tokens, s);
  }
  t.equal(fold('ΣΑΣ'), 'σασ', 'no final-sigma rule (unit by unit, as the bloom)');
});
