/**
 * Giving the C allocator's free pages back (native/malloc_trim.cc, src/lib/malloc-trim.ts): after
 * tens of MB of small malloc'd buffers are freed around a few kept ones (so glibc cannot give them
 * back by shrinking the arena's top, as an idle node's start-up leaves its arenas), the process's
 * anonymous resident memory stays up until `trimMalloc` runs and falls by most of it then.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { mallocTrimUnavailable, trimMalloc } from '../../../src/lib/malloc-trim.js';

const MB = 1024 * 1024;

function rssAnon(): number {
  const m = /^RssAnon:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return m === null ? NaN : Number(m[1]) * 1024;
}

const why = mallocTrimUnavailable();
if (why !== null) {
  // Built by `npm run build` on any machine with a C++ compiler; only LOGSVC_NATIVE=off turns it off.
  t.equal(process.env.LOGSVC_NATIVE, 'off', `the native malloc trim is missing: ${why}`);
  t.equal(trimMalloc(), false, 'without the module a trim does nothing');
} else {
  t.test('freed small buffers stay resident until a trim gives them back', async (t) => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const collect = async (): Promise<void> => {
      gc();
      gc();
      // ArrayBuffer memory is freed when the sweeper finishes, which may be on another thread.
      await new Promise((r) => setTimeout(r, 200));
    };
    // 64 MiB in 2 KiB malloc'd backing stores (below glibc's mmap threshold), one in 64 kept.
    const SIZE = 2048;
    const COUNT = (64 * MB) / SIZE;
    let all: Buffer[] = [];
    for (let i = 0; i < COUNT; i++) all.push(Buffer.allocUnsafeSlow(SIZE).fill(i & 0xff));
    const kept = all.filter((_, i) => i % 64 === 63);
    all = [];
    await collect();
    const before = rssAnon();
    t.equal(trimMalloc(), true, 'memory was released');
    const after = rssAnon();
    t.ok(before - after > 32 * MB, `anonymous RSS ${(before / MB).toFixed(1)} -> ${(after / MB).toFixed(1)} MiB after the trim`);
    // The kept buffers are intact.
    t.ok(kept.every((b, k) => b.length === SIZE && b[0] === ((k * 64 + 63) & 0xff) && b[SIZE - 1] === b[0]));
  });
}
