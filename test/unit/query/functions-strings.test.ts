import t from 'tap';
import { parsePrintf, printf } from '../../../src/query/functions/printf.js';
import { col, ev, rowsOf, run, type Fields } from './driver.js';

function one(q: string, e: Fields): Fields | undefined {
  return rowsOf(q, [e])[0];
}

function fmt(format: string, ...values: string[]): string | undefined {
  const p = parsePrintf(format);
  if (typeof p === 'string') throw new Error(p);
  return printf(p, values);
}

t.test('printf subset', async (t) => {
  t.equal(fmt('%s-%s', 'a', 'b'), 'a-b');
  t.equal(fmt('%d items', '42.9'), '42 items');
  t.equal(fmt('%.2f', '3.14159'), '3.14');
  t.equal(fmt('%,.2f', '1234567.891'), '1,234,567.89');
  t.equal(fmt('%,d', '-1234567'), '-1,234,567');
  t.equal(fmt('%f', '1.5'), '1.500000');
  t.equal(fmt('%x %X %o', '255', '255', '8'), 'ff FF 10');
  t.equal(fmt('100%%'), '100%');
  t.equal(fmt('%5s|%-5s|%05d', 'ab', 'cd', '42'), '   ab|cd   |00042');
  t.equal(fmt('%+d % d', '5', '5'), '+5  5');
  t.equal(fmt('%.3s', 'abcdef'), 'abc');
  t.equal(fmt('%e', '12345.678'), '1.234568e+04');
  t.equal(fmt('%d', 'abc'), undefined, 'not a number: no value');
  t.type(parsePrintf('%q'), 'string');
});

t.test('format(): fields, as, missing fields leave the output unset', async (t) => {
  const e = ev('x', { a: '1234.5', b: 'GET' });
  t.equal(one('format("%s %,.2f", field=[b, a])', e)?.['_format'], 'GET 1,234.50');
  t.equal(one('format("%.1f", field=a, as=a)', e)?.['a'], '1234.5');
  t.equal(one('format("%s", field=nosuch)', e)?.['_format'], undefined);
  t.throws(() => run('format("%q", field=a)', []), { code: 'E_QUERY', message: /unsupported conversion/ });
  t.equal(one('groupBy(b, function=avg(a)) | format("%.0f", field=_avg, as=_avg)', e)?.['_avg'], '1235');
});

t.test('formatTime(): strftime fields, zones, unit', async (t) => {
  const ms = Date.UTC(2020, 2, 5, 14, 7, 9, 45);
  const e = ev('x', { t: String(ms), secs: String(ms / 1000) }, ms);
  t.equal(one('formatTime("%Y-%m-%d %H:%M:%S.%L", as=f)', e)?.['f'], '2020-03-05 14:07:09.045');
  t.equal(one('formatTime("%y %b %B %a %A %j %e %I %p %z %Z %s", as=f)', e)?.['f'], '20 Mar March Thu Thursday 065  5 02 PM +0000 UTC 1583417229');
  t.equal(one('formatTime("%H:%M %z", as=f, timezone="+05:30")', e)?.['f'], '19:37 +0530');
  t.equal(one('formatTime("%F %T", as=f, timezone="America/New_York")', e)?.['f'], '2020-03-05 09:07:09');
  t.equal(one('formatTime("%F", as=f, field=secs)', e)?.['f'], '2020-03-05', 'auto: small values are seconds');
  t.equal(one('formatTime("%F", as=f, field=t, unit=milliseconds)', e)?.['f'], '2020-03-05');
  t.equal(one('formatTime("%F", as=f, field=nosuch)', e)?.['f'], undefined);
  t.throws(() => run('formatTime("%F")', []), { code: 'E_QUERY', message: /requires parameter as/ });
});

t.test('lowercase / lower / upper / length / concat', async (t) => {
  const e = ev('x', { Name: 'MiXeD', other: 'ABC' });
  t.equal(one('lowercase(Name)', e)?.['Name'], 'mixed', 'in place');
  t.equal(one('lowercase(other)', e)?.['Name'], 'MiXeD');
  const f = one('lowercase(field=Name, include=fields)', e)!;
  t.equal(f['name'], 'MiXeD');
  t.equal(f['Name'], undefined);
  const both = one('lowercase("*", include=both)', e)!;
  t.equal(both['name'], 'mixed');
  t.equal(both['other'], 'abc');
  t.equal(both['@rawstring'], 'x', '@-fields are left alone by *');
  // lower/upper: as:str=_lower / _upper (query-functions.md §1); the input field is left as it was.
  t.equal(one('upper(Name)', e)?.['_upper'], 'MIXED');
  t.equal(one('upper(Name)', e)?.['Name'], 'MiXeD');
  t.equal(one('lower(Name)', e)?.['_lower'], 'mixed');
  t.equal(one('lower(field=Name, as=Name)', e)?.['Name'], 'mixed', 'as= the input field: in place');
  t.equal(one('lower(Name, as=l)', e)?.['l'], 'mixed');
  t.equal(one('length(Name)', e)?.['_length'], '5');
  t.equal(one('length(Name, as=n)', e)?.['n'], '5');
  t.equal(one('concat([Name, other])', e)?.['_concat'], 'MiXeDABC');
  t.equal(one('concat([Name, nosuch, other], as=c)', e)?.['c'], 'MiXeDABC');
});

t.test('split(): array elements become events with _index and @id suffix', async (t) => {
  const e = ev('x', { 'arr[0].a': '1', 'arr[0].b': 'x', 'arr[1].a': '2', 'arr[2]': 'plain', other: 'o' });
  const rows = rowsOf('split(arr)', [e]).sort((x, y) => Number(x['_index']) - Number(y['_index']));
  t.equal(rows.length, 3);
  t.strictSame([rows[0]!['arr.a'], rows[0]!['arr.b'], rows[0]!['_index'], rows[0]!['other']], ['1', 'x', '0', 'o']);
  t.equal(rows[1]!['arr.a'], '2');
  t.equal(rows[2]!['arr'], 'plain');
  t.equal(rows[0]!['@id'], `${e['@id']}__0`);
  t.equal(rows[0]!['arr[1].a'], undefined, 'other elements are removed');
  const stripped = rowsOf('split(arr, strip=true)', [e]).find((r) => r['_index'] === '0')!;
  t.equal(stripped['a'], '1');
  t.strictSame(col(rowsOf('split()', [ev('x', { '_events[0]': 'a', '_events[1]': 'b' })]), '_events').sort(), ['a', 'b']);
  t.equal(rowsOf('split(nosuch)', [e]).length, 1, 'nothing to split: unchanged');
});

t.test('splitString()', async (t) => {
  const e = ev('a,b;c', { p: '1.2.3' });
  const r = one('splitString(by="[,;]")', e)!;
  t.strictSame([r['_splitstring[0]'], r['_splitstring[1]'], r['_splitstring[2]']], ['a', 'b', 'c']);
  t.equal(one('splitString(field=p, by="\\\\.", index=1, as=minor)', e)?.['minor'], '2');
  t.equal(one('splitString(field=p, by="\\\\.", index=-1, as=last)', e)?.['last'], '3');
});
