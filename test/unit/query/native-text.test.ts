/**
 * The native substring search of stored bytes (native/text_search.cc) against its JavaScript
 * fallback (byte-search.ts jsFinder) and a plain byte-by-byte search, on seeded random text:
 * ASCII letters in both cases, digits and punctuation, UTF-8 of 2 to 4 bytes (including bytes
 * that are letters with 0x20 set or cleared), needles cut from the text with their case changed,
 * at every start position, near both ends and across the 16-byte steps of the vector loop; and the
 * byte sets of text columns (byteSet, seen-bytes.ts) against the bytes themselves.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { jsFinder } from '../../../src/query/byte-search.js';
import { nativeByteSet, nativeFind, nativeFindUnavailable } from '../../../src/query/native-text.js';
import { byteSetOf } from '../../../src/query/seen-bytes.js';
import { Needle } from '../../../src/query/text-match.js';
import { rnd } from '../../helpers/random.js';

const PIECES = ['a', 'B', 'z', 'Q', 'k', 'K', '0', '9', ' ', '/', '@', '`', '[', '{', '_', '~', 'é', 'Ä', 'ß', '\u212A', '😀', 'ς', '\x7f', '\n', 'fire', 'FOX', 'Mac OS X'];

/** The first position at or after `from` of `needle` (folded: lower-case ASCII) in `b`, byte by byte. */
function plain(b: Buffer, from: number, needle: Buffer, folded: boolean): number {
  const low = (c: number): number => (folded && c >= 65 && c <= 90 ? c + 32 : c);
  outer: for (let i = from; i + needle.length <= b.length; i++) {
    for (let k = 0; k < needle.length; k++) if (low(b[i + k]!) !== needle[k]) continue outer;
    return i;
  }
  return -1;
}

if (nativeFind === null) {
  // Built by `npm run build` on any machine with a C++ compiler; only LOGSVC_NATIVE=off turns it off.
  t.equal(process.env.LOGSVC_NATIVE, 'off', `the native text search is missing: ${nativeFindUnavailable}`);
} else {
  const find = nativeFind;
  t.test('native find = JavaScript fallback = byte by byte', async (t) => {
    const r = rnd(4242);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    let found = 0;
    let checked = 0;
    for (let round = 0; round < 300; round++) {
      let s = '';
      const parts = Math.floor(r() * 120);
      for (let k = 0; k < parts; k++) s += pick(PIECES);
      const b = Buffer.from(s, 'utf8');
      for (let q = 0; q < 6; q++) {
        // A needle cut from the text (any case), or one of the pieces, or a word not in it.
        let text: string;
        if (q < 3 && s.length > 0) {
          const at = Math.floor(r() * s.length);
          text = s.slice(at, at + 1 + Math.floor(r() * 20));
          text = [...text].map((c) => (r() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join('');
        } else text = q === 5 ? 'no such needle' : pick(PIECES);
        if (text.length === 0) continue;
        for (const folded of [true, false]) {
          const nd = new Needle(text, folded);
          if (nd.bytes === null) continue;
          const js = jsFinder(b, nd);
          for (const from of [0, 1, Math.floor(b.length / 2), b.length - 17, b.length - 1, b.length, b.length + 3]) {
            if (from < 0) continue;
            const want = plain(b, from, nd.bytes, folded);
            const got = find(b, from, nd.bytes, folded);
            // The JavaScript finder answers null when a quick look rules the needle out.
            const fallback = js === null ? -1 : from > b.length ? -1 : js(from);
            if (got !== want || fallback !== want) t.fail(`${JSON.stringify(text)} folded ${folded} from ${from} in ${JSON.stringify(s)}: native ${got}, js ${fallback}, want ${want}`);
            if (want >= 0) found++;
            checked++;
          }
        }
      }
    }
    t.ok(checked > 5000, `${checked} searches compared`);
    t.ok(found > checked / 5, `${found} of them found the needle`);
  });

  t.test('every start position and length around the 16-byte steps', async (t) => {
    const hay = Buffer.from('x'.repeat(70), 'latin1');
    let checked = 0;
    for (let len = 1; len <= 20; len++) {
      for (let at = 0; at + len <= hay.length; at++) {
        const b = Buffer.from(hay);
        for (let k = 0; k < len; k++) b[at + k] = k % 2 === 0 ? 0x41 : 0x62; // "AbAb..."
        const needle = Buffer.from('ab'.repeat(len).slice(0, len), 'latin1');
        if (find(b, 0, needle, true) !== at) t.fail(`folded needle of ${len} at ${at}`);
        if (find(b, 0, needle, false) !== plain(b, 0, needle, false)) t.fail(`exact needle of ${len} at ${at}`);
        checked++;
      }
    }
    t.ok(checked > 1000);
  });

  t.test('arguments of the wrong kind are refused, not read', async (t) => {
    t.throws(() => (find as (...a: unknown[]) => number)('text', 0, Buffer.from('a'), true), TypeError);
    t.throws(() => (find as (...a: unknown[]) => number)(Buffer.from('a'), 0, new Uint16Array(2), true), TypeError);
    t.equal(find(Buffer.from('abc'), -1, Buffer.from('a'), false), -1);
    t.equal(find(Buffer.from('abc'), Number.NaN, Buffer.from('a'), false), -1);
  });
}

t.test('LOGSVC_NATIVE=off leaves the module unloaded', async (t) => {
  const script = `import('${new URL('../../../src/query/native-text.ts', import.meta.url).href}').then((m) => console.log(JSON.stringify([m.nativeFind === null, m.nativeFindUnavailable])))`;
  const r = spawnSync(process.execPath, [...process.execArgv, '--input-type=module', '-e', script], { env: { ...process.env, LOGSVC_NATIVE: 'off' }, encoding: 'utf8', timeout: 60_000 });
  t.equal(r.status, 0, r.stderr);
  t.strictSame(JSON.parse(r.stdout.trim().split('\n').pop()!), [true, 'LOGSVC_NATIVE=off']);
});

t.test('byteSet (native, else a loop) holds exactly the byte values of its input', async (t) => {
  const r = rnd(29);
  for (let k = 0; k < 200; k++) {
    const b = Buffer.from(Array.from({ length: Math.floor(r() * 300) }, () => PIECES[Math.floor(r() * PIECES.length)]!).join(''));
    const set = byteSetOf(b);
    t.equal(set.length, 32);
    const want = new Set(b);
    for (let c = 0; c < 256; c++) if (((set[c >> 3]! >> (c & 7)) & 1) === 1 !== want.has(c)) t.fail(`byte ${c}: ${want.has(c) ? 'missing' : 'extra'} in the set of ${b.length} bytes`);
  }
  t.equal(nativeByteSet !== null, nativeFind !== null, 'byteSet comes with find');
  t.same([...byteSetOf(Buffer.alloc(0))], new Array(32).fill(0));
});
