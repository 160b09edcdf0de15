/**
 * The DigestQueue contract, run against every implementation (embedded-shared.test.ts,
 * test/kafka/kafka-queue-shared.test.ts). Only what the interface promises is asserted: offsets
 * increase in append order per partition and are chained by nextOffset (their spacing is the
 * implementation's: bytes for the embedded queue, 1 for Kafka), reads and follows return exactly
 * what was appended, in order. Record sizes (`recordBytes`, `bytesBetween`) are asserted where both
 * must agree: records of one size.
 */
import type { Test } from 'tap';
import type { DigestQueue, DurableRecord, QueueRecord } from '../../../src/queue/index.js';
import { payload, readAll } from './helpers.js';

export { payload, readAll };

export interface QueueFactory {
  /** A fresh, empty queue with `partitions` partitions; `reopen` gives a second queue object on the same storage. */
  open(t: Test, partitions: number): Promise<{ q: DigestQueue; reopen: () => Promise<DigestQueue> }>;
}

/** One turn of the event loop: durable-append notifications run on setImmediate after the acks. */
const notified = (): Promise<void> => new Promise((r) => setImmediate(r));

async function until(what: string, cond: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function chained(t: Test, recs: QueueRecord[], what: string): void {
  for (let i = 1; i < recs.length; i++) {
    if (recs[i]!.offset !== recs[i - 1]!.nextOffset) {
      t.fail(`${what}: record ${i} at ${recs[i]!.offset}, previous nextOffset ${recs[i - 1]!.nextOffset}`);
      return;
    }
  }
  t.ok(recs.every((r) => r.nextOffset > r.offset), `${what}: chained by nextOffset`);
}

export function digestQueueSuite(t: Test, f: QueueFactory): void {
  t.test('a fresh queue: empty partitions, unknown partitions refused', async (t) => {
    const { q } = await f.open(t, 3);
    t.equal(q.partitionCount, 3);
    for (let p = 0; p < 3; p++) t.strictSame(await readAll(q, p), [], `partition ${p} is empty`);
    t.equal(q.endOffset(0), q.endOffset(1), 'all partitions start at the same offset');
    t.throws(() => q.endOffset(3), { code: 'E_INTERNAL', message: /no partition 3/ });
    await t.rejects(async () => q.append(3, Buffer.from('x')), { code: 'E_INTERNAL', message: /no partition 3/ });
    await t.rejects(readAll(q, 3), { code: 'E_INTERNAL' });
    await q.close();
  });

  t.test('sequential appends: increasing offsets, endOffset = last nextOffset, read back identical', async (t) => {
    const { q } = await f.open(t, 2);
    const start = q.endOffset(1);
    const offsets: number[] = [];
    for (let i = 0; i < 30; i++) {
      offsets.push(await q.append(1, payload(i)));
      if (i > 0) t.ok(offsets[i]! > offsets[i - 1]!, `record ${i} after record ${i - 1}`);
    }
    t.equal(offsets[0], start, 'the first record gets the old end offset');
    const back = await readAll(q, 1);
    t.equal(back.length, 30);
    t.strictSame(back.map((r) => r.offset), offsets);
    t.ok(back.every((r, i) => r.partition === 1 && r.payload.equals(payload(i))), 'payloads and partition');
    chained(t, back, 'read');
    t.equal(q.endOffset(1), back.at(-1)!.nextOffset, 'endOffset is the last nextOffset');
    t.strictSame(await readAll(q, 0), [], 'other partition untouched');
    t.ok(q.sizeBytes() >= 0);
    t.equal(await q.append(1, Buffer.alloc(0)), back.at(-1)!.nextOffset, 'an empty payload is a record too');
    t.equal((await readAll(q, 1, back.at(-1)!.nextOffset))[0]?.payload.length, 0);
    await q.close();
  });

  t.test('record sizes: recordBytes of each record covers its payload; bytesBetween over records of one size is the sum of their recordBytes', async (t) => {
    const { q } = await f.open(t, 1);
    t.equal(q.bytesBetween(0, q.endOffset(0), q.endOffset(0)), 0, 'an empty range is 0 bytes');
    const start = q.endOffset(0);
    for (let i = 0; i < 20; i++) await q.append(0, Buffer.alloc(1000, i));
    const back = await readAll(q, 0);
    t.ok(back.every((r) => q.recordBytes(r) >= r.payload.length), 'each record takes at least its payload');
    const sum = (recs: QueueRecord[]): number => recs.reduce((n, r) => n + q.recordBytes(r), 0);
    // The same size for every record: Kafka's estimate (the mean record size) is exact here too.
    t.equal(q.bytesBetween(0, start, q.endOffset(0)), sum(back), 'all of them');
    t.equal(q.bytesBetween(0, back[5]!.offset, back[12]!.offset), sum(back.slice(5, 12)), 'a range of them');
    t.equal(q.bytesBetween(0, back[12]!.offset, back[5]!.offset), 0, 'a range backwards is empty');
    await q.close();
  });

  t.test('300 concurrent appends resolve with offsets in call order', async (t) => {
    const { q } = await f.open(t, 1);
    const payloads = Array.from({ length: 300 }, (_, i) => payload(i, 10 + (i % 97)));
    const offsets = await Promise.all(payloads.map((p) => q.append(0, p)));
    t.ok(
      offsets.every((o, i) => i === 0 || o > offsets[i - 1]!),
      'offsets increase in call order',
    );
    const back = await readAll(q, 0);
    t.strictSame(back.map((r) => r.offset), offsets, 'read back in offset order');
    t.ok(back.every((r, i) => r.payload.equals(payloads[i]!)), 'identical payloads');
    chained(t, back, 'read');
    await q.close();
  });

  t.test('onDurable listeners see every record, in offset order, with its attachment, after the append resolves', async (t) => {
    const { q } = await f.open(t, 2);
    const resolved = new Set<string>();
    const seen: { l: string; r: DurableRecord; resolvedAlready: boolean }[] = [];
    const key = (p: number, o: number): string => `${p}:${o}`;
    q.onDurable((r) => seen.push({ l: 'a', r, resolvedAlready: resolved.has(key(r.partition, r.offset)) }));
    q.onDurable((r) => seen.push({ l: 'b', r, resolvedAlready: resolved.has(key(r.partition, r.offset)) }));
    const attachments = Array.from({ length: 60 }, (_, i) => ({ n: i }));
    const results = await Promise.all(
      attachments.map((a, i) =>
        q.append(i % 2, payload(i), a).then((off) => {
          resolved.add(key(i % 2, off));
          return { part: i % 2, off, i };
        }),
      ),
    );
    const plain = await q.append(0, Buffer.from('no attachment'));
    resolved.add(key(0, plain));
    await until('notifications', () => seen.length === 2 * 61);
    await notified();
    t.equal(seen.length, 2 * 61, 'both listeners saw every record once');
    t.equal(seen.filter((s) => !s.resolvedAlready).length, 0, 'listeners run after the append has resolved');
    for (const l of ['a', 'b']) {
      for (const part of [0, 1]) {
        const offs = seen.filter((s) => s.l === l && s.r.partition === part).map((s) => s.r.offset);
        t.strictSame(offs, [...offs].sort((x, y) => x - y), `listener ${l}, partition ${part}: offset order`);
      }
    }
    for (const { part, off, i } of results) {
      const rec = seen.find((s) => s.l === 'a' && s.r.partition === part && s.r.offset === off)?.r;
      if (rec === undefined || rec.attachment !== attachments[i] || !rec.payload.equals(payload(i))) t.fail(`record ${i}: attachment or payload`);
    }
    t.equal(seen.find((s) => s.r.partition === 0 && s.r.offset === plain)?.r.attachment, undefined);
    await q.close();
  });

  t.test('a throwing listener neither fails the queue nor starves the other listeners', async (t) => {
    const { q } = await f.open(t, 1);
    const seen: number[] = [];
    q.onDurable(() => {
      throw new Error('listener bug');
    });
    q.onDurable((r) => seen.push(r.offset));
    const a = await q.append(0, Buffer.from('a'));
    const b = await q.append(0, Buffer.from('b'));
    await until('notifications', () => seen.length === 2);
    t.strictSame(seen, [a, b]);
    t.ok((await q.append(0, Buffer.from('c'))) > b, 'appends still work');
    await q.close();
  });

  t.test('read(p, from) starts at the given record; at or past the end reads nothing', async (t) => {
    const { q } = await f.open(t, 1);
    const offsets: number[] = [];
    for (let i = 0; i < 20; i++) offsets.push(await q.append(0, payload(i)));
    for (const k of [0, 1, 13, 19]) {
      const back = await readAll(q, 0, offsets[k]);
      t.strictSame(back.map((r) => r.offset), offsets.slice(k), `from record ${k}`);
      t.ok(back.every((r, j) => r.payload.equals(payload(k + j))));
    }
    t.strictSame(await readAll(q, 0, q.endOffset(0)), [], 'from the end: nothing');
    t.strictSame(await readAll(q, 0, q.endOffset(0) + 1000), [], 'past the end: nothing');
    await q.close();
  });

  t.test('truncateBelow never loses a record at or above the mark', async (t) => {
    const { q } = await f.open(t, 1);
    const offsets: number[] = [];
    for (let i = 0; i < 20; i++) offsets.push(await q.append(0, payload(i)));
    await q.truncateBelow(0, offsets[12]!);
    const back = await readAll(q, 0, offsets[12]!);
    t.strictSame(back.map((r) => r.offset), offsets.slice(12));
    t.ok(back.every((r, j) => r.payload.equals(payload(12 + j))));
    t.ok((await q.append(0, payload(20))) > offsets[19]!, 'appends continue');
    await q.close();
  });

  t.test('a second queue object on the same storage sees every record and continues the offsets', async (t) => {
    const { q, reopen } = await f.open(t, 2);
    const want: [number, number][] = [];
    for (let i = 0; i < 20; i++) want.push([i % 2, await q.append(i % 2, payload(i))]);
    const end0 = q.endOffset(0);
    await q.close();
    const q2 = await reopen();
    t.equal(q2.partitionCount, 2);
    t.equal(q2.endOffset(0), end0);
    for (const part of [0, 1]) {
      const back = await readAll(q2, part);
      t.strictSame(back.map((r) => r.offset), want.filter((w) => w[0] === part).map((w) => w[1]), `partition ${part}`);
    }
    t.equal(await q2.append(0, payload(99)), end0, 'the next append continues at the old end');
    await q2.close();
  });

  t.test('ensurePartitions raises the count and never lowers it', async (t) => {
    const { q } = await f.open(t, 2);
    const one = await q.append(1, Buffer.from('one'));
    await q.ensurePartitions(4);
    t.equal(q.partitionCount, 4);
    for (let p = 2; p < 4; p++) t.strictSame(await readAll(q, p), [], `new partition ${p} is empty`);
    const four = await q.append(3, Buffer.from('four'));
    t.strictSame((await readAll(q, 3)).map((r) => [r.offset, r.payload.toString()]), [[four, 'four']]);
    await q.ensurePartitions(1);
    t.equal(q.partitionCount, 4, 'not lowered');
    t.strictSame((await readAll(q, 1)).map((r) => [r.offset, r.payload.toString()]), [[one, 'one']], 'existing partitions untouched');
    await q.close();
  });

  t.test('follow: every record from an offset, then new ones live, in order; stop ends it', async (t) => {
    const { q } = await f.open(t, 2);
    const offsets: number[] = [];
    for (let i = 0; i < 10; i++) offsets.push(await q.append(0, payload(i)));
    const got: QueueRecord[] = [];
    const errors: Error[] = [];
    const h = q.follow(0, offsets[3]!, async (r) => void got.push(r), (e) => errors.push(e));
    await until('the backlog', () => got.length === 7);
    t.strictSame(got.map((r) => r.offset), offsets.slice(3), 'the backlog from the given offset');
    for (let i = 10; i < 25; i++) offsets.push(await q.append(0, payload(i)));
    await q.append(1, Buffer.from('other partition'));
    await until('the live records', () => got.length === 22);
    t.strictSame(got.map((r) => r.offset), offsets.slice(3), 'live records in order, nothing twice, nothing of partition 1');
    t.ok(got.every((r, j) => r.partition === 0 && r.payload.equals(payload(3 + j))), 'payloads');
    chained(t, got, 'follow');
    t.throws(() => q.follow(0, 0, async () => undefined), { code: 'E_INTERNAL', message: /already followed/ });
    await h.stop();
    const n = got.length;
    await q.append(0, payload(100));
    await new Promise((r) => setTimeout(r, 1000));
    t.equal(got.length, n, 'nothing after stop');
    t.strictSame(errors, []);
    // Followed again from where it stopped.
    const again: number[] = [];
    const h2 = q.follow(0, got.at(-1)!.nextOffset, async (r) => void again.push(r.offset));
    await until('the record appended after stop', () => again.length === 1);
    await h2.stop();
    await q.close();
  });

  t.test('follow waits for a slow handler (backpressure) and a throwing handler ends the follow', async (t) => {
    const { q } = await f.open(t, 1);
    const offsets = await Promise.all(Array.from({ length: 200 }, (_, i) => q.append(0, payload(i))));
    let running = 0;
    let maxRunning = 0;
    const got: number[] = [];
    const h = q.follow(0, offsets[0]!, async (r) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      if (got.length % 50 === 0) await new Promise((res) => setTimeout(res, 20));
      got.push(r.offset);
      running--;
    });
    await until('all 200', () => got.length === 200);
    t.equal(maxRunning, 1, 'one handler call at a time');
    t.strictSame(got, offsets);
    await h.stop();

    const errors: Error[] = [];
    let calls = 0;
    const h3 = q.follow(
      0,
      offsets[0]!,
      async () => {
        calls++;
        if (calls === 5) throw new Error('handler bug');
      },
      (e) => errors.push(e),
    );
    await until('the error', () => errors.length === 1);
    t.match(errors[0]!.message, /handler bug/);
    await new Promise((r) => setTimeout(r, 300));
    t.equal(calls, 5, 'no call after the throwing one');
    await h3.stop();
    await q.close();
  });
}
