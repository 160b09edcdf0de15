/**
 * HEC ack ids (src/ingest/doors/hec-ack.ts): every id a node hands out checks true on any other
 * instance (another node, or this one after a restart), for its repository and channel only; ids
 * not handed out check false but for the documented one in a million; ids are safe integers and do
 * not repeat within a process.
 */
import t from 'tap';
import { HecAckIds, isIssuedAckId } from '../../../src/ingest/doors/hec-ack.js';

t.test('ids handed out by one instance are acknowledged by any check', async (t) => {
  const a = new HecAckIds();
  const b = new HecAckIds();
  const ids = new Set<number>();
  let bad = 0;
  for (let i = 0; i < 2000; i++) {
    const id = (i % 2 === 0 ? a : b).issue('repo-1', 'chan-A');
    if (!Number.isSafeInteger(id) || id < 0 || !isIssuedAckId('repo-1', 'chan-A', id)) bad++;
    ids.add(id);
  }
  t.equal(bad, 0, 'every id is a safe integer that checks true');
  t.equal(ids.size, 2000, 'no id repeats');
});

t.test('ids are bound to their repository and channel; ids never handed out check false', async (t) => {
  const a = new HecAckIds(12345);
  const ids = Array.from({ length: 20_000 }, () => a.issue('repo-1', 'chan-A'));
  const count = (f: (id: number) => boolean): number => ids.filter(f).length;
  // One in 2^20 passes by chance: 20,000 ids give about 0.02 such; more than 3 means a broken check.
  t.ok(count((id) => isIssuedAckId('repo-1', 'chan-B', id)) <= 3, 'another channel: false');
  t.ok(count((id) => isIssuedAckId('repo-2', 'chan-A', id)) <= 3, "another repository's token: false");
  t.ok(count((id) => isIssuedAckId('repo-1', 'chan-A', id + 1) && !ids.includes(id + 1)) <= 3, 'neighbouring ids: false');
  // Splunk numbers ids 0, 1, 2 ...: such small ids were not handed out here (serials start at 12345).
  t.ok(count((id) => isIssuedAckId('repo-1', 'chan-A', id % 1000)) <= 3, 'small made-up ids: false');
  for (const v of [-1, 1.5, Number.NaN, 2 ** 53, Number.MAX_VALUE]) t.equal(isIssuedAckId('repo-1', 'chan-A', v), false, `not an id: ${v}`);
});

t.test('the serial wraps within safe integers', async (t) => {
  const a = new HecAckIds(2 ** 33 - 1);
  const last = a.issue('r', 'c');
  const first = a.issue('r', 'c');
  t.ok(last < 2 ** 53 && Number.isSafeInteger(last));
  t.ok(first < 2 ** 20, 'the next serial is 0');
  t.ok(isIssuedAckId('r', 'c', last) && isIssuedAckId('r', 'c', first));
  t.throws(() => new HecAckIds(2 ** 33), RangeError);
});
