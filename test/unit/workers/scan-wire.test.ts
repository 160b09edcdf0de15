/**
 * A scan task's block refs packed to cross to a query thread (src/workers/scan-wire.ts): after a
 * structured clone, the task read on the thread is the task posted, every ref with the same
 * properties (`framed`, `below` only where set), units in memory as they were.
 */
import t from 'tap';
import { fromWire, toWire } from '../../../src/workers/scan-wire.js';
import { refsSlice, shareRefs } from '../../../src/query/packed-refs.js';
import type { BlockRef, PruneTask } from '../../../src/query/scan.js';
import { DEFAULT_LIMITS } from '../../../src/query/runtime.js';

function ref(i: number, rnd: () => number): BlockRef {
  const b: BlockRef = {
    pos: Math.floor(rnd() * 2 ** 40),
    headerLength: 84 + Math.floor(rnd() * 9000),
    bloomLength: Math.floor(rnd() * 16384),
    gramLength: Math.floor(rnd() * 16384),
    fieldGrams: rnd() < 0.5,
    compressedLength: Math.floor(rnd() * 2 ** 24),
    uncompressedLength: Math.floor(rnd() * 2 ** 30),
    eventCount: Math.floor(rnd() * 5000),
    minTs: 1_700_000_000_000 + i * 1000 - Math.floor(rnd() * 1e6),
    maxTs: 1_700_000_000_000 + i * 1000 + Math.floor(rnd() * 1e6),
  };
  if (rnd() < 0.7) b.framed = true;
  if (rnd() < 0.2) b.below = Math.floor(rnd() * 2 ** 45);
  return b;
}

t.test('packed refs come back as they were, through a structured clone', async (t) => {
  let seed = 7;
  const rnd = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let round = 0; round < 20; round++) {
    const units: PruneTask['units'] = Array.from({ length: 1 + Math.floor(rnd() * 4) }, (_, u) => ({ kind: 'seg' as const, path: `/d/s${u}.seg`, partition: u, tags: { type: 'kv' }, blocks: Array.from({ length: Math.floor(rnd() * 50) }, (_, i) => ref(i, rnd)) }));
    units.push({ kind: 'mem', partition: 9, tags: {}, parts: [{ events: new Uint8Array([1, 2, 3]), offset: 4, base: 0, skip: 0, at: 5 }], hw: round % 2 === 0 ? null : { offset: 3, index: 1 } });
    const task: PruneTask = { spec: { text: 'x', args: {}, ctx: { start: 0, end: 1, timeZoneOffsetMinutes: 0, now: 1, live: false }, limits: DEFAULT_LIMITS }, repoName: 'r', units, deadline: 99, scanBytes: 1234, prefix: 'p' };
    const back = fromWire(structuredClone(toWire(task)));
    t.strictSame(back, task, `round ${round}`);
  }
  t.end();
});

t.test('runs of a shared ref list cross from its kept packed form, as if packed block by block', async (t) => {
  let seed = 11;
  const rnd = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const list = Array.from({ length: 40 }, (_, i) => ref(i, rnd));
  shareRefs(list);
  const spec: PruneTask['spec'] = { text: 'x', args: {}, ctx: { start: 0, end: 1, timeZoneOffsetMinutes: 0, now: 1, live: false }, limits: DEFAULT_LIMITS };
  const pieces = [list, refsSlice(list, 0, 10), refsSlice(list, 10, 40), refsSlice(refsSlice(list, 10, 40), 5, 17), refsSlice(list, 39, 40), list.slice(3, 9)];
  for (let round = 0; round < 2; round++) {
    const task: PruneTask = { spec, repoName: 'r', units: pieces.map((blocks, u) => ({ kind: 'seg' as const, path: `/d/s${u}.seg`, partition: u, tags: {}, blocks })), deadline: 9, scanBytes: 1 };
    // The same blocks in lists of their own (never shared): packed block by block.
    const plain: PruneTask = { ...task, units: task.units.map((u) => (u.kind === 'seg' ? { ...u, blocks: [...u.blocks] } : u)) };
    const wire = toWire(task);
    t.strictSame([...wire.refs], [...toWire(plain).refs], `round ${round}: the same numbers`);
    t.strictSame(fromWire(structuredClone(wire)), task, `round ${round}: the same task back`);
  }
  t.end();
});
