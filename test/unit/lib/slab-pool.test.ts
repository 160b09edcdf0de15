/**
 * SlabPool: views over reused SharedArrayBuffer slabs by power-of-two class, a bound on what it
 * keeps, and no way to hand one slab to two owners.
 */
import t from 'tap';
import { isShared, SlabPool } from '../../../src/lib/slab-pool.js';

const KIB = 1024;

t.test('sizes outside the pooled range get no slab', async (t) => {
  const pool = new SlabPool({ minBytes: 64 * KIB, maxBytes: 256 * KIB });
  t.equal(pool.acquire(64 * KIB - 1), null, 'below the smallest class');
  t.equal(pool.acquire(256 * KIB + 1), null, 'above the largest class');
  t.equal(pool.acquire(Number.NaN), null, 'not a size (an unparsable Content-Length)');
  t.equal(pool.acquire(-1), null);
});

t.test('a view of exactly the asked size over a slab of its class, reused after release', async (t) => {
  const pool = new SlabPool({ minBytes: 64 * KIB, maxBytes: 1024 * KIB });
  const a = pool.acquire(100 * KIB)!;
  t.equal(a.length, 100 * KIB);
  t.ok(isShared(a), 'in shared memory');
  t.equal(a.buffer.byteLength, 128 * KIB, 'the next power of two from the smallest class');
  const b = pool.acquire(100 * KIB)!;
  t.not(b.buffer, a.buffer, 'a slab in use is not handed out again');
  pool.release(a);
  t.equal(pool.retainedBytes(), 128 * KIB);
  const c = pool.acquire(65 * KIB)!;
  t.equal(c.buffer, a.buffer, 'a released slab of the class is reused');
  t.equal(c.length, 65 * KIB);
  t.equal(pool.retainedBytes(), 0);
  const d = pool.acquire(300 * KIB)!;
  t.not(d.buffer, a.buffer, 'another class gets another slab');
  t.equal(d.buffer.byteLength, 512 * KIB);
});

t.test('a second release of a slab is an error; foreign buffers are not taken in', async (t) => {
  const pool = new SlabPool({ minBytes: 64 * KIB, maxBytes: 256 * KIB });
  const a = pool.acquire(64 * KIB)!;
  pool.release(a);
  t.throws(() => pool.release(a), { code: 'E_INTERNAL', message: /released twice/ });
  pool.release(Buffer.alloc(64 * KIB));
  pool.release(new Uint8Array(new SharedArrayBuffer(64 * KIB)));
  t.equal(pool.retainedBytes(), 64 * KIB, 'only its own slab is kept');
  t.ok(!isShared(Buffer.alloc(8)));
});

t.test('at most maxRetainedBytes of free slabs are kept', async (t) => {
  const pool = new SlabPool({ minBytes: 64 * KIB, maxBytes: 256 * KIB, maxRetainedBytes: 300 * KIB });
  const views = [pool.acquire(256 * KIB)!, pool.acquire(256 * KIB)!, pool.acquire(64 * KIB)!];
  for (const v of views) pool.release(v);
  t.equal(pool.retainedBytes(), 256 * KIB, 'one 256 KiB slab kept: the second, and then the 64 KiB one, would pass the bound');
  const again = pool.acquire(200 * KIB)!;
  t.equal(again.buffer, views[0]!.buffer, 'the kept slab is the one handed out next');
});
