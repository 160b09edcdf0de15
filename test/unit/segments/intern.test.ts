/**
 * utf8Interned: the text of the bytes, always; the same string object for the same short ASCII
 * bytes met again; whatever the table's slots hold (random strings overwrite each other's slots).
 */
import t from 'tap';
import { utf8Interned } from '../../../src/segments/intern.js';
import { rnd } from '../../helpers/random.js';

t.test('the text of the bytes, shared for short ASCII', async (t) => {
  const b = Buffer.from('xxlevel=INFOyy naïve 🎉 ' + 'z'.repeat(80), 'utf8');
  const a = utf8Interned(b, 2, 7);
  t.equal(a, 'level');
  t.equal(utf8Interned(Buffer.from('level'), 0, 5), a);
  t.equal(Object.is(utf8Interned(Buffer.from('..level'), 2, 7), a), true, 'the same bytes elsewhere: the same string');
  const nonAscii = b.indexOf('naïve');
  t.equal(utf8Interned(b, nonAscii, nonAscii + Buffer.byteLength('naïve 🎉')), 'naïve 🎉', 'non-ASCII decoded as UTF-8');
  const long = b.indexOf('zzz');
  t.equal(utf8Interned(b, long, long + 80), 'z'.repeat(80), 'longer than the table takes');
  t.equal(utf8Interned(b, 3, 3), '', 'empty');
});

t.test('random strings: always their own text, whatever overwrote their slot', async (t) => {
  const r = rnd(31);
  const words = Array.from({ length: 200_000 }, () => Array.from({ length: Math.floor(r() * 20) }, () => String.fromCharCode(32 + Math.floor(r() * 95))).join(''));
  let wrong = 0;
  for (let round = 0; round < 2; round++) {
    for (const w of words) {
      const bytes = Buffer.from(`#${w}#`, 'latin1');
      if (utf8Interned(bytes, 1, bytes.length - 1) !== w) wrong++;
    }
  }
  t.equal(wrong, 0, '400,000 lookups, every one its own text');
});
