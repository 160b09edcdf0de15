/**
 * The themed modules (math, time parts, crypto, text, arrays and bit fields, parsing, sequence and
 * other aggregates, event functions), each against documented examples and edge cases of
 * query-functions.md §1. Expected values come from the documented semantics and standard test
 * vectors (RFC 1321/3174/6234 digests, the Community ID specification's example), not from
 * running this engine. rowsOf checks 1 vs 3 partitions for every aggregate.
 */
import t from 'tap';
import { col, ev, rowsOf, run, type Fields } from './driver.js';

/** The value of `field` after `q` over one event with `fields`. */
function one(q: string, fields: Fields, field: string): string | undefined {
  const rows = rowsOf(q, [ev('x', fields)]);
  return rows[0]?.[field];
}

t.test('math: documented functions, outputs _<name>, non-numbers and non-finite results give nothing', async (t) => {
  t.equal(one('math:abs(x)', { x: '-3.5' }, '_abs'), '3.5');
  t.equal(one('math:sqrt(x)', { x: '16' }, '_sqrt'), '4');
  t.equal(one('math:log10(x)', { x: '1000' }, '_log10'), '3');
  t.equal(one('math:log2(x)', { x: '8' }, '_log2'), '3');
  t.equal(one('math:log(x)', { x: '-1' }, '_log'), undefined, 'ln(-1) is not a number');
  t.equal(one('math:ceil(x)', { x: '1.2' }, '_ceil'), '2');
  t.equal(one('math:floor(x)', { x: '-1.2' }, '_floor'), '-2');
  t.equal(one('math:pow(x, exponent=10)', { x: '2' }, '_pow'), '1024');
  t.equal(one('math:pow(x, exponent=0.5)', { x: '9' }, '_pow'), '3');
  t.equal(one('math:mod(x, divisor=3)', { x: '-7' }, '_mod'), '2', 'floor modulus takes the divisor\'s sign');
  t.equal(one('math:mod(x, divisor=3)', { x: '7.9' }, '_mod'), '1', 'operands floored first');
  t.equal(one('math:deg2rad(x)', { x: '180' }, '_deg2rad'), '3.14159265358979');
  t.equal(one('math:rad2deg(x)', { x: '0' }, '_rad2deg'), '0');
  t.equal(one('math:arctan2(x=a, y=b)', { a: '1', b: '1' }, '_arctan2'), '0.785398163397448');
  t.equal(one('math:cos(x)', { x: '0' }, '_cos'), '1');
  t.equal(one('math:exp(x)', { x: '0' }, '_exp'), '1');
  t.equal(one('math:expm1(x)', { x: '0' }, '_expm1'), '0');
  t.equal(one('math:abs(x)', { x: 'abc' }, '_abs'), undefined);
  t.equal(one('math:abs(x, as=y)', { x: '-1' }, 'y'), '1');
  t.equal(one('math:sqrt(x)', {}, '_sqrt'), undefined, 'missing field');
  const s = rowsOf('math:spherical2cartesian(azimuth=az, polar=po, radius=r)', [ev('x', { az: '0', po: '0', r: '2' })])[0]!;
  t.strictSame([s['_spherical2cartesian.x'], s['_spherical2cartesian.y'], s['_spherical2cartesian.z']], ['2', '0', '0']);
  t.throws(() => run('math:mod(x, divisor=0)', []), { message: /divisor must not be 0/ });
  t.equal(one('geography:distance(lat1=a, lon1=b, lat2=c, lon2=d)', { a: '0', b: '0', c: '0', d: '1' }, '_distance'), '111195.080233533', 'one degree of longitude at the equator, in meters');
  t.equal(one('unit:convert(v, to="s")', { v: '514ms' }, 'v'), '0.514');
  t.equal(one('unit:convert(v)', { v: '4KiB' }, 'v'), '4096');
  t.equal(one('unit:convert(v, from="ms", to="s", as=o)', { v: '1500' }, 'o'), '1.5');
  t.equal(one('unit:convert(v, to="KB", keepUnit=true, as=o)', { v: '2MB' }, 'o'), '2000KB');
  t.equal(one('unit:convert(v, to="KiB", binary=true, as=o)', { v: '2MB' }, 'o'), '2048', 'binary prefixes');
});

// 2020-03-25T14:15:00.394Z, a Wednesday, day 85 of a leap year, ISO week 13.
const T = '1585145700394';

t.test('time parts: UTC or the given zone, @timestamp by default', async (t) => {
  const f = { t: T, '@timestamp': T };
  t.equal(one('time:year()', f, '_year'), '2020');
  t.equal(one('time:month()', f, '_month'), '3');
  t.equal(one('time:monthName()', f, '_monthName'), 'March');
  t.equal(one('time:dayOfMonth()', f, '_dayOfMonth'), '25');
  t.equal(one('time:dayOfWeek()', f, '_dayOfWeek'), '3');
  t.equal(one('time:dayOfWeekName()', f, '_dayOfWeekName'), 'Wednesday');
  t.equal(one('time:dayOfYear()', f, '_dayOfYear'), '85');
  t.equal(one('time:weekOfYear()', f, '_weekOfYear'), '13');
  t.equal(one('time:hour()', f, '_hour'), '14');
  t.equal(one('time:hour(timezone="+02:00")', f, '_hour'), '16');
  t.equal(one('time:hour(timezone="America/New_York")', f, '_hour'), '10', 'EDT in March 2020');
  t.equal(one('time:minute()', f, '_minute'), '15');
  t.equal(one('time:second()', f, '_second'), '0');
  t.equal(one('time:millisecond()', f, '_millisecond'), '394');
  t.equal(one('time:year(field=t, as=y)', { t: '0' }, 'y'), '1970');
  t.equal(one('time:dayOfWeek(field=t)', { t: String(Date.UTC(2023, 0, 1)) }, '_dayOfWeek'), '7', 'Sunday is 7');
  t.equal(one('time:weekOfYear(field=t)', { t: String(Date.UTC(2021, 0, 3)) }, '_weekOfYear'), '53', '2021-01-03 is in week 53 of 2020');
  t.equal(one('time:hour(timezoneField=tz)', { ...f, tz: '+05:30' }, '_hour'), '19');
  t.equal(one('time:hour(field=t)', { t: 'x' }, '_hour'), undefined);
  t.throws(() => run('time:hour(timezone="Mars/Olympus")', []), { message: /unknown time zone/ });
});

t.test('duration, start, end, formatDuration', async (t) => {
  t.equal(one('duration("5m")', {}, '_duration'), '300000');
  t.equal(one('duration("2d")', {}, '_duration'), '172800000');
  t.throws(() => run('duration("soon")', []), { message: /not a relative time/ });
  t.equal(one('formatDuration(d)', { d: '93784005' }, 'd'), '1d2h3m4s5ms');
  t.equal(one('formatDuration(d, precision=2)', { d: '93784005' }, 'd'), '1d2h');
  t.equal(one('formatDuration(d, from=s, as=o)', { d: '90' }, 'o'), '1m30s');
  t.equal(one('formatDuration(d)', { d: '1.5' }, 'd'), '1.5', 'not an integer: unchanged');
  const r = rowsOf('start() | end()', [ev('x')])[0]!;
  t.ok(Number(r['_end']) - Number(r['_start']) === 24 * 3600 * 1000, 'the query range (one day in the driver)');
});

t.test('crypto and hashing: standard vectors; missing fields hash as ""', async (t) => {
  t.equal(one('crypto:md5(s)', { s: 'abc' }, '_md5'), '900150983cd24fb0d6963f7d28e17f72');
  t.equal(one('crypto:sha1(s)', { s: 'abc' }, '_sha1'), 'a9993e364706816aba3e25717850c26c9cd0d89d');
  t.equal(one('crypto:sha256(s)', { s: 'abc' }, '_sha256'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  t.equal(one('crypto:md5(nosuch)', {}, '_md5'), 'd41d8cd98f00b204e9800998ecf8427e');
  t.equal(one('crypto:md5([a, b])', { a: 'a', b: 'bc' }, '_md5'), '900150983cd24fb0d6963f7d28e17f72', 'several fields: concatenated');
  t.equal(one('base64Encode(s)', { s: 'hello' }, '_base64Encode'), 'aGVsbG8=');
  t.equal(one('base64Decode(s)', { s: 'aGVs bG8=' }, '_base64Decode'), 'hello', 'characters outside the alphabet are ignored');
  t.equal(one('base64Decode(s)', { s: 'a' }, '_base64Decode'), undefined, 'invalid: no field');
  t.equal(one('base64Decode(s, charset="ISO-8859-1")', { s: '/w==' }, '_base64Decode'), 'ÿ');
  t.equal(one('base64Decode(s)', { s: '/w==' }, '_base64Decode'), undefined, 'not UTF-8: no field');
  t.equal(one('parseHexString(s)', { s: '0x68656c6c6f' }, '_parsehexstring'), 'hello');
  t.equal(one('parseHexString(s, charset="UTF-16BE")', { s: '00680069' }, '_parsehexstring'), 'hi');
  t.equal(one('shannonEntropy(s)', { s: 'aabb' }, '_shannonentropy'), '1');
  t.equal(one('shannonEntropy(s)', { s: 'abcd' }, '_shannonentropy'), '2');
  const h = rowsOf('hash(s, limit=10)', [ev('a', { s: 'x' }), ev('b', { s: 'x' }), ev('c', { s: 'y' })]).map((r) => Number(r['_hash']));
  t.ok(h.every((v) => Number.isInteger(v) && v >= 0 && v < 10), 'hash mod limit');
  t.equal(h[0], h[1], 'same input, same hash');
  const full = Number(one('hash(s)', { s: 'x' }, '_hash'));
  t.ok(full >= 0 && full <= 4294967295);
  t.equal(one('tokenHash(s)', { s: 'a b c' }, '_tokenHash'), one('tokenHash(s)', { s: 'c  a b' }, '_tokenHash'), 'order-independent');
  // The Community ID specification's example flow.
  const flow = { sip: '128.232.110.120', dip: '66.35.250.204', sp: '34855', dp: '80' };
  t.equal(one('communityId(sourceip=sip, destinationip=dip, sourceport=sp, destinationport=dp, proto=tcp)', flow, '_community_id'), '1:LQU9qZlK+B5F3KDmev6m5PMibrg=');
  t.equal(one('communityId(sourceip=dip, destinationip=sip, sourceport=dp, destinationport=sp, proto="6")', flow, '_community_id'), '1:LQU9qZlK+B5F3KDmev6m5PMibrg=', 'both directions');
  const rw = rowsOf('hashRewrite(user, salt="s")', [ev('login user=bob ok', { user: 'bob' })])[0]!;
  t.equal(rw['user']!.length, 64);
  t.equal(rw['@rawstring'], `login user=${rw['user']} ok`, 'also replaced in @rawstring');
  t.strictSame(col(rowsOf('hashRewrite(user, salt="s", as=h) | hashMatch("bob", salt="s", field=h)', [ev('a', { user: 'bob' }), ev('b', { user: 'eve' })]), 'user'), ['bob']);
  t.equal(rowsOf('hashRewrite(user, salt="s", bits=64, as=h)', [ev('a', { user: 'bob' })])[0]!['h']!.length, 16);
});

t.test('text: contains/startsWith/endsWith, length in graphemes, positionOf, substring, trim, editDistance', async (t) => {
  const E = [ev('a', { s: 'hello world' }), ev('b', { s: 'goodbye' })];
  t.strictSame(col(rowsOf('text:contains(string=s, substring="world")', E), 's'), ['hello world']);
  t.strictSame(col(rowsOf('text:startsWith(string=s, substring="good")', E), 's'), ['goodbye']);
  t.strictSame(col(rowsOf('text:endsWith(string=s, substring="bye")', E), 's'), ['goodbye']);
  t.strictSame(col(rowsOf('!text:contains(string=s, substring="o")', E), 's'), []);
  t.equal(one('x := text:contains(string=s, substring="ll")', { s: 'hello' }, 'x'), 'true');
  t.equal(one('text:length(s)', { s: '👍🏽ab' }, '_length'), '3', 'a grapheme cluster counts once');
  t.equal(one('length(s)', { s: '👍🏽ab' }, '_length'), '6', 'length() counts UTF-16 units');
  t.equal(one('text:positionOf(string=s, character="/", occurrence=2)', { s: 'a/b/c' }, '_position'), '3');
  t.equal(one('text:positionOf(string=s, character="/", begin=2)', { s: 'a/b/c' }, '_position'), '3');
  t.equal(one('text:positionOf(string=s, character="x")', { s: 'a/b/c' }, '_position'), '-1');
  t.equal(one('text:substring(string=s, begin=1, end=3)', { s: 'abcdef' }, '_string'), 'bc');
  t.equal(one('text:substring(string=s, begin=2)', { s: 'abcdef' }, '_string'), 'cdef');
  t.equal(one('text:substring(string="literal", begin=3)', {}, '_string'), 'eral', 'quoted: a literal');
  t.equal(one('text:trim(s)', { s: '\u00a0 x y \t' }, '_trim'), 'x y');
  t.equal(one('text:trim(s, mode=start)', { s: '  x ' }, '_trim'), 'x ');
  t.equal(one('text:editDistance(target=a, reference=b, maxDistance=5)', { a: 'kitten', b: 'sitting' }, '_distance'), '3');
  t.equal(one('text:editDistance(target=a, reference=b, maxDistance=2)', { a: 'kitten', b: 'sitting' }, '_distance'), '2', 'capped');
  t.equal(one('text:editDistance(target=a, reference=b, maxDistance=5)', { a: 'ab', b: 'ba' }, '_distance'), '1', 'a transposition');
  t.equal(one('text:editDistance(target=a, reference=b, maxDistance=5, allowTranspositions=false)', { a: 'ab', b: 'ba' }, '_distance'), '2');
  t.equal(one('text:editDistance(target=a, reference=b, maxDistance=5, ignoreCase=true)', { a: 'AB', b: 'ab' }, '_distance'), '0');
  const arr = rowsOf('text:editDistanceAsArray(target=a, references=["cat", "dog"], maxDistance=3)', [ev('x', { a: 'cot' })])[0]!;
  t.strictSame([arr['_distance[0].reference'], arr['_distance[0].distance'], arr['_distance[1].distance']], ['cat', '1', '2']);
  t.throws(() => run('text:editDistance(target=a, reference=b, maxDistance=101)', []), { message: /maxDistance must be a whole number from 1 to 100/ });
});

t.test('url encoding, ANSI, JSON and XML pretty printing, writeJson, getField, setField', async (t) => {
  t.equal(one('urlEncode(s)', { s: 'a b&c/é' }, '_urlencode'), 'a+b%26c%2F%C3%A9');
  t.equal(one('urlDecode(s)', { s: 'a+b%26c%2F%C3%A9' }, '_urldecode'), 'a b&c/é');
  t.equal(one('urlDecode(s)', { s: '%E0%A4%A' }, '_urldecode'), undefined, 'invalid escapes: no field');
  t.equal(one('stripAnsiCodes(s)', { s: '\u001b[31mred\u001b[0m text' }, 's'), 'red text');
  t.equal(one('json:prettyPrint(s)', { s: '{"a":1,"b":[true]}' }, 's'), '{\n  "a": 1,\n  "b": [\n    true\n  ]\n}');
  t.equal(one('json:prettyPrint(s)', { s: 'not json' }, 's'), 'not json', 'invalid: unchanged');
  t.equal(one('json:prettyPrint(s, strict=true, as=o)', { s: 'not json' }, 'o'), undefined, 'strict: no output');
  t.equal(one('xml:prettyPrint(s)', { s: '<a><b>t</b><c/></a>' }, 's'), '<a>\n  <b>t</b>\n  <c/>\n</a>');
  t.equal(one('xml:prettyPrint(s, strict=true, as=o)', { s: '<a><b></a>' }, 'o'), undefined);
  t.equal(one('writeJson([a, b])', { a: 'x', 'b.c': 'y', 'b.d[0]': 'z', other: 'q' }, '_json'), '{"a":"x","b":{"c":"y","d":["z"]}}');
  t.equal(one('x := getField("host-name")', { 'host-name': 'web1' }, 'x'), 'web1');
  t.equal(one('setField(target=n, value=v)', { n: 'dyn', v: '42' }, 'dyn'), '42');
});

t.test('arrays: length, contains, regex, dedup, append, sort, rename, drop, concatArray, eval, filter, exists', async (t) => {
  const A = { 'a[0]': 'x', 'a[1]': 'Y', 'a[2]': 'x', 'a[4]': 'gap' };
  t.equal(one('array:length("a[]")', A, '_length'), '3', 'counts to the first gap');
  t.strictSame(rowsOf('array:contains("a[]", value="Y")', [ev('1', A), ev('2', { 'a[0]': 'z' })]).length, 1);
  t.strictSame(rowsOf('array:contains("a[]", value="gap")', [ev('1', A)]).length, 0, 'past the gap');
  t.strictSame(rowsOf('array:regex("a[]", regex="^y$", flags=i)', [ev('1', A)]).length, 1);
  const d = rowsOf('array:dedup("a[]")', [ev('1', A)])[0]!;
  t.strictSame([d['a[0]'], d['a[1]'], d['a[2]']], ['x', 'Y', undefined]);
  const ap = rowsOf('array:append(array="a[]", values=[v, "lit", nosuch])', [ev('1', { ...A, v: 'V' })])[0]!;
  t.strictSame([ap['a[3]'], ap['a[4]'], ap['a[5]']], ['V', 'lit', undefined], 'written from the first gap; no-value expressions skipped');
  const so = rowsOf('array:sort("s[]")', [ev('1', { 's[0]': 'b', 's[1]': 'A', 's[2]': 'c' })])[0]!;
  t.strictSame([so['s[0]'], so['s[1]'], so['s[2]']], ['A', 'b', 'c'], 'strings case-insensitively');
  const sn = rowsOf('array:sort("s[]", type=number, order=desc, asArray="t[]")', [ev('1', { 's[0]': '10', 's[1]': '9', 's[2]': '100' })])[0]!;
  t.strictSame([sn['t[0]'], sn['t[1]'], sn['t[2]'], sn['s[0]']], ['100', '10', '9', '10']);
  const rn = rowsOf('array:rename("a[]", asArray="b[]")', [ev('1', A)])[0]!;
  t.strictSame([rn['b[0]'], rn['b[2]'], rn['a[0]'], rn['a[4]']], ['x', 'x', undefined, 'gap']);
  const dr = rowsOf('array:drop("a[]")', [ev('1', A)])[0]!;
  t.strictSame([dr['a[0]'], dr['a[4]']], [undefined, 'gap']);
  t.equal(one('concatArray(a, separator=",", prefix="[", suffix="]")', A, '_concatArray'), '[x,Y,x]');
  t.equal(one('concatArray(a, from=1, to=1)', A, '_concatArray'), 'Y');
  const N = { 'n[0]': '1', 'n[1]': '5', 'n[2]': '3' };
  const sq = rowsOf('array:eval("n[]", asArray="sq[]", var=x, function={sq := x * x})', [ev('1', N)])[0]!;
  t.strictSame([sq['sq[0]'], sq['sq[1]'], sq['sq[2]']], ['1', '25', '9']);
  const fl = rowsOf('array:filter("n[]", asArray="big[]", var=x, function={test(x > 2)})', [ev('1', N)])[0]!;
  t.strictSame([fl['big[0]'], fl['big[1]'], fl['big[2]']], ['5', '3', undefined]);
  t.strictSame(rowsOf('array:exists("n[]", var=x, condition={test(x > 4)})', [ev('1', N), ev('2', { 'n[0]': '2' })]).length, 1);
  const O = { 'u[0].name': 'ann', 'u[0].role': 'admin', 'u[1].name': 'bo', 'u[1].role': 'dev' };
  const names = rowsOf('objectArray:eval("u[]", asArray="names[]", var=x, function={names := x.name})', [ev('1', O)])[0]!;
  t.strictSame([names['names[0]'], names['names[1]']], ['ann', 'bo']);
  t.strictSame(rowsOf('objectArray:exists("u[]", var=x, condition={x.role=admin})', [ev('1', O)]).length, 1);
  t.strictSame(rowsOf('objectArray:exists("u[]", var=x, condition={x.role=root})', [ev('1', O)]).length, 0);
});

t.test('array aggregates merge across partitions: union, intersection, reduceAll, reduceColumn, reduceRow', async (t) => {
  const E = [ev('1', { 't[0]': 'a', 't[1]': 'b' }), ev('2', { 't[0]': 'b', 't[1]': 'c' }), ev('3', { 't[0]': 'b', 't[1]': 'a' })];
  t.strictSame(rowsOf('array:union("t[]")', E), [{ '_union[0]': 'a', '_union[1]': 'b', '_union[2]': 'c' }]);
  t.strictSame(rowsOf('array:intersection("t[]")', E), [{ '_intersection[0]': 'b' }]);
  const N = [ev('1', { 'n[0]': '1', 'n[1]': '10' }), ev('2', { 'n[0]': '2', 'n[1]': '20', 'n[2]': '5' })];
  t.strictSame(rowsOf('array:reduceAll("n[]", var=x, function=sum(x))', N), [{ _sum: '38' }]);
  t.strictSame(rowsOf('array:reduceColumn("n[]", var=x, function=max(x))', N), [{ '_reduceColumn[0]': '2', '_reduceColumn[1]': '20', '_reduceColumn[2]': '5' }]);
  t.strictSame(col(rowsOf('array:reduceRow("n[]", var=x, function=avg(x)) | sort(_avg, order=asc)', N), '_avg'), ['5.5', '9']);
});

t.test('bit fields', async (t) => {
  const F = { f: '5' };
  const r = rowsOf('bitfield:extractFlags(field=f, output=[[0, r], [1, w], [2, x]])', [ev('1', F)])[0]!;
  t.strictSame([r['r'], r['w'], r['x']], ['true', 'false', 'true']);
  const o = rowsOf('bitfield:extractFlags(field=f, output=[[0, r], [1, w]], onlyTrue=true)', [ev('1', F)])[0]!;
  t.strictSame([o['r'], o['w']], ['true', undefined]);
  t.equal(one('bitfield:extractFlagsAsString(field=f, flagNames=[[2, "x"], [0, "r"], [1, "w"]])', F, '_flags'), 'r x', 'low bit first');
  t.equal(one('bitfield:extractFlagsAsString(field=f, flagNames=[[1, "w"]], separator=",")', F, '_flags'), '', 'no set bit: empty');
  const a = rowsOf('bitfield:extractFlagsAsArray(field=f, flagNames=[[0, "r"], [2, "x"]])', [ev('1', F)])[0]!;
  t.strictSame([a['_flags[0]'], a['_flags[1]']], ['r', 'x']);
  t.equal(one('subnet(ip, bits=24)', { ip: '10.1.2.3' }, '_subnet'), '10.1.2.0/24');
  t.equal(one('subnet(ip, bits=12)', { ip: '10.31.2.3' }, '_subnet'), '10.16.0.0/12');
});

t.test('parsers: parseInt, parseCsv, parseFixedWidth, parseUri, parseUrl, parseXml, parseCEF, parseLEEF, findTimestamp', async (t) => {
  t.equal(one('parseInt(v)', { v: 'ff' }, 'v'), '255', 'radix 16 by default');
  t.equal(one('parseInt(v, radix=2, as=o)', { v: '101' }, 'o'), '5');
  t.equal(one('parseInt(v, endian=little)', { v: '0100' }, 'v'), '1');
  t.equal(one('parseInt(v)', { v: 'xyz' }, 'v'), 'xyz', 'not a number in the radix: unchanged');
  const c = rowsOf('parseCsv(line, columns=[a, b, c, d])', [ev('x', { line: 'one,"two, three",four' })])[0]!;
  t.strictSame([c['a'], c['b'], c['c'], c['d']], ['one', 'two, three', 'four', undefined]);
  const ct = rowsOf('parseCsv(line, columns=[a, b], delimiter=";", trim=true)', [ev('x', { line: ' x ;"y""q"' })])[0]!;
  t.strictSame([ct['a'], ct['b']], ['x', 'y"q']);
  const fw = rowsOf('parseFixedWidth(line, columns=[a, b, c], widths=[4, 6, 2])', [ev('x', { line: 'abcd 12345' })])[0]!;
  t.strictSame([fw['a'], fw['b'], fw['c']], ['abcd', '12345', undefined]);
  const u = rowsOf('parseUri(link)', [ev('x', { link: 'https://user:pw@host.example:8443/p/a?q=1#frag' })])[0]!;
  t.strictSame([u['link.scheme'], u['link.hostname'], u['link.port'], u['link.path'], u['link.query'], u['link.fragment']], ['https', 'host.example', '8443', '/p/a', 'q=1', 'frag']);
  t.equal(rowsOf('parseUri(link, defaultBase="//")', [ev('x', { link: 'host.example/p' })])[0]!['link.hostname'], 'host.example', 'defaultBase for partial URIs');
  t.equal(rowsOf('parseUri(link)', [ev('x', { link: '/just/a/path' })])[0]!['link.path'], undefined, 'no authority: unchanged');
  const l = rowsOf('parseUrl()', [ev('x', { url: 'http://a:b@h:80/x?y#z' })])[0]!;
  t.strictSame([l['url.scheme'], l['url.username'], l['url.password'], l['url.host'], l['url.port'], l['url.path'], l['url.query'], l['url.fragment']], ['http', 'a', 'b', 'h', '80', '/x', 'y', 'z']);
  const x = rowsOf('parseXml()', [ev('<root><item id="7">text</item><n>1</n></root>')])[0]!;
  t.strictSame([x['root.item.id'], x['root.item'], x['root.n']], ['7', 'text', '1']);
  t.strictSame(rowsOf('parseXml(strict=true)', [ev('<a><b></a>')]), [], 'strict: invalid XML drops the event');
  t.equal(rowsOf('parseXml()', [ev('<a><b></a>')])[0]!['@error'], 'true', 'not strict: kept, with an error flag');
  const cef = rowsOf('parseCEF()', [ev('Mar 1 host CEF:0|Vendor|Prod\\|uct|1.0|100|Name here|5|src=10.0.0.1 act=blocked msg=hello world cs1Label=rule cs1=r42')])[0]!;
  t.strictSame(
    [cef['cef.version'], cef['cef.device.vendor'], cef['cef.device.product'], cef['cef.name'], cef['cef.severity'], cef['cef.ext.src'], cef['cef.ext.msg'], cef['cef.label.rule']],
    ['0', 'Vendor', 'Prod|uct', 'Name here', '5', '10.0.0.1', 'hello world', 'r42'],
  );
  const leef = rowsOf('parseLEEF()', [ev('LEEF:1.0|IBM|QRadar|2.0|42|src=1.2.3.4\tdst=5.6.7.8')])[0]!;
  t.strictSame([leef['leef.vendor'], leef['leef.product'], leef['leef.event_id'], leef['leef.ext.src'], leef['leef.ext.dst']], ['IBM', 'QRadar', '42', '1.2.3.4', '5.6.7.8']);
  const leef2 = rowsOf('parseLEEF()', [ev('LEEF:2.0|V|P|1|7|^|a=1^b=2')])[0]!;
  t.strictSame([leef2['leef.ext.a'], leef2['leef.ext.b']], ['1', '2'], 'LEEF 2.0 delimiter from the header');
  t.equal(rowsOf('findTimestamp()', [ev('x 2024-03-05T10:20:30.123Z y')])[0]!['@timestamp'], String(Date.UTC(2024, 2, 5, 10, 20, 30, 123)));
  t.equal(rowsOf('findTimestamp()', [ev('1.2.3.4 - - [05/Mar/2024:10:20:30 +0200] "GET /"')])[0]!['@timestamp'], String(Date.UTC(2024, 2, 5, 8, 20, 30)));
  t.equal(rowsOf('findTimestamp(timezone="UTC", as=t)', [ev('2024-03-05 10:20:30 no zone')])[0]!['t'], String(Date.UTC(2024, 2, 5, 10, 20, 30)));
  const noTz = (raw: string): Fields => {
    const e = ev(raw);
    delete e['@timezone'];
    return e;
  };
  t.equal(rowsOf('findTimestamp(as=t)', [noTz('2024-03-05 10:20:30 no zone')])[0]!['@error'], 'true', 'no zone, no timezone, no @timezone: an error field');
  t.equal(rowsOf('findTimestamp(as=t)', [{ ...noTz('2024-03-05 10:20:30 no zone'), '@timezone': '-01:00' }])[0]!['t'], String(Date.UTC(2024, 2, 5, 11, 20, 30)), 'the event\'s @timezone (timezoneField)');
});

const H: Fields[] = [
  ev('1', { bytes: '512', status: '200' }, 1000),
  ev('2', { bytes: '2048', status: '500' }, 2000),
  ev('3', { bytes: '128', status: '404' }, 3000),
  ev('4', { bytes: '1024', status: '200' }, 4000),
];

t.test('sequence functions after an ordering aggregate: accumulate, neighbor, slidingWindow, partition, appendAggregation', async (t) => {
  t.strictSame(col(rowsOf('head() | accumulate(sum(bytes))', H), '_sum'), ['512', '2560', '2688', '3712']);
  t.strictSame(col(rowsOf('head() | accumulate(sum(bytes), current=exclude)', H), '_sum'), ['0', '512', '2560', '2688']);
  t.strictSame(col(rowsOf('head() | neighbor(status, prefix=prev)', H), 'prev.status'), [undefined, '200', '500', '404']);
  t.strictSame(col(rowsOf('head() | neighbor(status, direction=succeeding, distance=2, prefix=next)', H), 'next.status'), ['404', '200', undefined, undefined]);
  t.strictSame(col(rowsOf('head() | slidingWindow(sum(bytes), events=2)', H), '_sum'), ['512', '2560', '2176', '1152']);
  t.strictSame(col(rowsOf('sort(@timestamp, order=asc) | slidingTimeWindow(count(), span=1500ms)', H), '_count'), ['1', '2', '2', '2']);
  t.strictSame(rowsOf('head() | partition(sum(bytes), condition={status=404})', H), [{ _sum: '2560' }, { _sum: '1152' }], 'split before the matching row');
  t.strictSame(rowsOf('head() | partition(sum(bytes), condition={status=404}, split=after)', H), [{ _sum: '2688' }, { _sum: '1024' }]);
  t.strictSame(rowsOf('head(2) | appendAggregation(count())', H).map((r) => r['_count'] ?? r['@rawstring']), ['1', '2', '2']);
  t.throws(() => run('accumulate(sum(bytes))', H), { message: /must follow an aggregate function that orders events/ });
  t.throws(() => run('head() | accumulate(groupBy(status))', H), { message: /gives one row/ });
  t.throws(() => run('head() | slidingWindow(sum(bytes), events=1001)', H), { message: /events must be a whole number from 1 to 1000/ });
  t.throws(() => run('sort(@timestamp, order=desc) | slidingTimeWindow(count(), span=1s)', H), { message: /must be ordered by @timestamp/ });
});

t.test('other aggregates: session, series, transpose, linReg, counterAsRate, fieldset, fieldstats, callFunction, percentage, createEvents', async (t) => {
  const S = [ev('a', { u: 'x' }, 0), ev('b', { u: 'x' }, 10_000), ev('c', { u: 'x' }, 11_000), ev('d', { u: 'y' }, 5_000)];
  t.strictSame(rowsOf('session(maxpause=5s)', S), [{ _count: '4' }], 'gaps of exactly maxpause do not split');
  t.strictSame(rowsOf('session(maxpause=4s)', S), [{ _count: '1' }, { _count: '1' }, { _count: '2' }], 'gaps over maxpause split');
  t.strictSame(rowsOf('groupBy(u, function=session(maxpause=4s))', S), [
    { u: 'x', _count: '1' },
    { u: 'x', _count: '2' },
    { u: 'y', _count: '1' },
  ]);
  t.strictSame(rowsOf('series(u, maxpause=3s, separator=",")', S).map((r) => r['u']), ['x', 'y', 'x,x']);
  t.strictSame(rowsOf('groupBy(status) | transpose(status)', H), [{ status: '_count', '200': '2', '404': '1', '500': '1' }]);
  const L = [ev('1', { x: '1', y: '2' }), ev('2', { x: '2', y: '4' }), ev('3', { x: '3', y: '6' })];
  t.strictSame(rowsOf('linReg(x=x, y=y)', L), [{ _slope: '2', _intercept: '0', _r2: '1', _n: '3' }]);
  t.strictSame(rowsOf('linReg(x=x, y=y)', [ev('1', { x: '1', y: '2' }), ev('2', { x: '1', y: '3' })]), [{}], 'all x equal: nothing');
  t.strictSame(rowsOf('counterAsRate(c)', [ev('1', { c: '100' }, 0), ev('2', { c: '130' }, 30_000), ev('3', { c: '160' }, 60_000)]), [{ _rate: '1' }]);
  t.strictSame(col(rowsOf('fieldset()', [ev('1', { a: '1' }), ev('2', { b: '1' })]), 'field').filter((f) => !f!.startsWith('@') && !f!.startsWith('#')), ['a', 'b']);
  t.strictSame(rowsOf('fieldstats()', [ev('1', { a: '1' }), ev('2', { a: '2' }), ev('3', { a: '1' })]).find((r) => r['field'] === 'a'), { field: 'a', _count: '3', distinct: '2' });
  t.strictSame(rowsOf('callFunction("max", field=bytes)', H), [{ _function: '2048' }]);
  t.strictSame(rowsOf('callFunction("sum", field=bytes, as=s)', H), [{ s: '3712' }]);
  t.throws(() => run('callFunction("median", field=bytes)', H), { message: /must be one of avg, count, max, min, range, sum/ });
  t.strictSame(rowsOf('percentage({status=200})', H), [{ _percentage: '50' }]);
  t.strictSame(rowsOf('createEvents(["a=1", "a=2"]) | kvParse() | sum(a)', H), [{ _sum: '3' }], 'the input is discarded');
});

t.test('event functions, sample, dropEvent, copyEvent, beta:param', async (t) => {
  const e = ev('abc', { x: 'de' });
  t.equal(rowsOf('eventSize()', [e])[0]!['_eventSize'], String(String(e['@timestamp']).length + 3 + 1 + 2), 'bytes of @timestamp, @rawstring, @timezone and x');
  t.equal(rowsOf('eventFieldCount()', [e])[0]!['_eventFieldCount'], '4', '@timestamp, @rawstring, @timezone, x');
  t.strictSame(rowsOf('sample(100) | count()', H), [{ _count: '4' }]);
  const many = Array.from({ length: 2000 }, (_, i) => ev(`e${i}`, {}, i));
  const kept = Number(rowsOf('sample(10) | count()', many)[0]!['_count']);
  t.ok(kept > 120 && kept < 280, `sample(10) kept ${kept} of 2000`);
  t.throws(() => run('!sample(10)', H), { message: /cannot be used inside a filter expression/ }, 'not negatable');
  t.strictSame(rowsOf('case { status=200 | dropEvent() ; * } | count()', H), [{ _count: '2' }]);
  t.throws(() => run('copyEvent("x")', H), { message: /can only be used in a parser/ });
  t.strictSame(rowsOf('beta:param(host, as=h) | select(h) | head(1)', H, { args: { host: 'web1' } }), [{ h: 'web1' }]);
  t.strictSame(rowsOf('beta:repeating(1m) | count()', H), [{ _count: '4' }]);
});
