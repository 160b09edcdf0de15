import t from 'tap';
import { parseRelative, resolveRange } from '../../../src/query/time.js';
import { parseQueryRequest } from '../../../src/query/query-service.js';

const NOW = 1_700_000_000_000;

t.test('relative times in every unit spelling', async (t) => {
  t.equal(parseRelative('24hours'), 86_400_000);
  t.equal(parseRelative('10s'), 10_000);
  t.equal(parseRelative('10 seconds'), 10_000);
  t.equal(parseRelative('15min'), 900_000);
  t.equal(parseRelative('2 h'), 7_200_000);
  t.equal(parseRelative('1d'), 86_400_000);
  t.equal(parseRelative('3 weeks'), 21 * 86_400_000);
  t.equal(parseRelative('500ms'), 500);
  t.equal(parseRelative('1y'), 365 * 86_400_000);
  t.equal(parseRelative('2 qtrs'), 182 * 86_400_000);
  t.equal(parseRelative('banana'), null);
  t.equal(parseRelative('10 parsecs'), null);
  t.equal(parseRelative('-5m'), null);
});

t.test('ranges resolve against now, default 24 hours', async (t) => {
  t.same(resolveRange(undefined, undefined, NOW, false), { start: NOW - 86_400_000, end: NOW });
  t.same(resolveRange('1h', 'now', NOW, false), { start: NOW - 3_600_000, end: NOW });
  t.same(resolveRange(NOW - 5000, NOW - 1000, NOW, false), { start: NOW - 5000, end: NOW - 1000 });
  t.same(resolveRange('2h', '1h', NOW, false), { start: NOW - 7_200_000, end: NOW - 3_600_000 });
  t.same(resolveRange(String(NOW - 10), undefined, NOW, false), { start: NOW - 10, end: NOW });
  t.throws(() => resolveRange('banana', undefined, NOW, false), { code: 'E_VALIDATION', message: /start: "banana" is not a relative time/ });
  t.throws(() => resolveRange('1h', '2h', NOW, false), { code: 'E_VALIDATION', message: /after end/ });
  t.throws(() => resolveRange(1.5, undefined, NOW, false), { code: 'E_VALIDATION', message: /^start:/ });
  t.throws(() => resolveRange({}, undefined, NOW, false), { code: 'E_VALIDATION', message: /^start:/ });
});

t.test('live queries need a relative start and end now', async (t) => {
  t.same(resolveRange('5m', undefined, NOW, true), { start: NOW - 300_000, end: NOW });
  t.throws(() => resolveRange(NOW - 1000, undefined, NOW, true), { message: /live query needs a relative start/ });
  t.throws(() => resolveRange('5m', '1m', NOW, true), { message: /live query ends now/ });
});

t.test('request bodies are checked field by field', async (t) => {
  const r = parseQueryRequest({ queryString: 'x', start: '1h', isLive: true, timeZoneOffsetMinutes: 60, arguments: { a: 'b', n: 3 } });
  t.equal(r.queryString, 'x');
  t.equal(r.start, '1h');
  t.equal(r.end, undefined);
  t.equal(r.isLive, true);
  t.equal(r.timeZoneOffsetMinutes, 60);
  t.same({ ...r.arguments }, { a: 'b', n: '3' });
  t.same(parseQueryRequest({ queryString: '' }).isLive, false);
  t.throws(() => parseQueryRequest([]), { code: 'E_VALIDATION', message: /JSON object/ });
  t.throws(() => parseQueryRequest({}), { message: /^queryString: required/ });
  t.throws(() => parseQueryRequest({ queryString: 5 }), { message: /^queryString/ });
  t.throws(() => parseQueryRequest({ queryString: 'x'.repeat(70_000) }), { message: /^queryString: longer/ });
  t.throws(() => parseQueryRequest({ queryString: '', start: true }), { message: /^start:/ });
  t.throws(() => parseQueryRequest({ queryString: '', end: [] }), { message: /^end:/ });
  t.throws(() => parseQueryRequest({ queryString: '', isLive: 'yes' }), { message: /^isLive/ });
  t.throws(() => parseQueryRequest({ queryString: '', timeZoneOffsetMinutes: 'x' }), { message: /^timeZoneOffsetMinutes/ });
  t.throws(() => parseQueryRequest({ queryString: '', timeZoneOffsetMinutes: 5000 }), { message: /^timeZoneOffsetMinutes/ });
  t.throws(() => parseQueryRequest({ queryString: '', arguments: 'a' }), { message: /^arguments:/ });
  t.throws(() => parseQueryRequest({ queryString: '', arguments: { a: {} } }), { message: /^arguments\.a:/ });
  const many: Record<string, string> = {};
  for (let i = 0; i < 101; i++) many[`p${i}`] = 'v';
  t.throws(() => parseQueryRequest({ queryString: '', arguments: many }), { message: /more than 100/ });
});
