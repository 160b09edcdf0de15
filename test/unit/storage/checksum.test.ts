import t from 'tap';
import { crc32c } from '../../../src/storage/checksum.js';
import { crc32c as reexported } from '../../../src/storage/index.js';

t.test('crc32c matches the standard CRC-32C check value', async (t) => {
  t.equal(crc32c(Buffer.from('123456789', 'ascii')), 0xe3069283);
  t.equal(crc32c(new TextEncoder().encode('123456789')), 0xe3069283, 'plain Uint8Array gives the same value');
  t.equal(reexported, crc32c, 'storage/index re-exports the same function');
});

t.test('crc32c of known inputs', async (t) => {
  t.equal(crc32c(Buffer.alloc(0)), 0, 'empty input');
  // RFC 3720 (iSCSI) test vectors, B.4.
  t.equal(crc32c(Buffer.alloc(32, 0x00)), 0x8a9136aa, '32 bytes of zeros');
  t.equal(crc32c(Buffer.alloc(32, 0xff)), 0x62a8ab43, '32 bytes of 0xff');
  const inc = Buffer.alloc(32);
  for (let i = 0; i < 32; i++) inc[i] = i;
  t.equal(crc32c(inc), 0x46dd794e, '32 incrementing bytes');
  const dec = Buffer.alloc(32);
  for (let i = 0; i < 32; i++) dec[i] = 31 - i;
  t.equal(crc32c(dec), 0x113fdb5c, '32 decrementing bytes');
});

t.test('crc32c always returns an unsigned 32-bit integer', async (t) => {
  for (const s of ['123456789', 'a', 'logsvc', '\u00ff\u00fe']) {
    const v = crc32c(Buffer.from(s, 'latin1'));
    t.ok(Number.isInteger(v) && v >= 0 && v <= 0xffffffff, `${JSON.stringify(s)} -> ${v}`);
  }
  t.ok(crc32c(Buffer.from('123456789')) > 0x7fffffff, 'a value with the top bit set is not negative');
});

t.test('crc32c continues from an initial value', async (t) => {
  const a = Buffer.from('1234');
  const b = Buffer.from('56789');
  t.equal(crc32c(b, crc32c(a)), 0xe3069283);
  t.equal(crc32c(Buffer.from('123456789'), 0), 0xe3069283, 'initial 0 is the default');
});

t.test('crc32c honours the byteOffset and length of a Uint8Array view', async (t) => {
  const backing = new Uint8Array(64).fill(0x5a);
  backing.set(new TextEncoder().encode('123456789'), 17);
  const view = new Uint8Array(backing.buffer, 17, 9);
  t.equal(crc32c(view), 0xe3069283, 'only the viewed bytes are checksummed');
  const bufView = Buffer.from(backing.buffer, 17, 9);
  t.equal(crc32c(bufView), 0xe3069283, 'same for a Buffer view');
  t.equal(crc32c(backing.subarray(17, 26)), 0xe3069283, 'and for a subarray');
});

t.test('crc32c detects every single-bit flip of a short message', async (t) => {
  const msg = Buffer.from('123456789');
  let detected = 0;
  for (let i = 0; i < msg.length * 8; i++) {
    const m = Buffer.from(msg);
    m[i >> 3]! ^= 1 << (i & 7);
    if (crc32c(m) !== 0xe3069283) detected++;
  }
  t.equal(detected, 72);
});
