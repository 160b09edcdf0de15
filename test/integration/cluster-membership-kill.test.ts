/**
 * Membership across real processes: three nodes (each its own process) join through a partial peers
 * list; one is killed with SIGKILL and the other two declare it not alive after the failure timeout
 * (not before, and within generous slack); restarted with the same id and uuid it is alive again on
 * every node, and the restarted one sees the others. A node killed in the middle of a streamed
 * answer fails its reader at once with a retriable error.
 */
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { childEnv, type Teardown } from '../helpers/node-process.js';
import { startMember, waitFor } from '../helpers/membership.js';
import type { LogsvcError } from '../../src/lib/errors.js';

const CHILD = fileURLToPath(new URL('../helpers/membership-child.mjs', import.meta.url));
const HEARTBEAT_MS = 200;
const FAILURE_MS = 2000;
const SLACK_MS = 8000; // a shared 2-core machine: only a gross miss fails

interface Event {
  at: number;
  ready?: string;
  up?: number;
  down?: number;
  reason?: string;
}

interface Child {
  id: number;
  proc: ChildProcess;
  events: Event[];
  addr: string;
  exited: Promise<void>;
}

async function startChild(t: Teardown, id: number, uuid: string, peers: string[]): Promise<Child> {
  const proc = spawn(process.execPath, [CHILD, JSON.stringify({ id, uuid, peers, heartbeatMs: HEARTBEAT_MS, failureMs: FAILURE_MS, lifetimeMs: 120_000 })], {
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  t.teardown(async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    await exited;
  });
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const events: Event[] = [];
  createInterface({ input: proc.stdout! }).on('line', (l) => events.push(JSON.parse(l) as Event));
  const deadline = Date.now() + 20_000;
  while (events[0]?.ready === undefined) {
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`child ${id} did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { id, proc, events, addr: events[0].ready, exited };
}

/** The ids a child currently considers alive, from its up/down events. */
function alive(c: Child): number[] {
  const s = new Set<number>();
  for (const e of c.events) {
    if (e.up !== undefined) s.add(e.up);
    if (e.down !== undefined) s.delete(e.down);
  }
  return [...s].sort();
}

t.test('a SIGKILLed node is detected by the failure timeout and comes back', async (t) => {
  const uuids = [randomUUID(), randomUUID(), randomUUID()];
  const n1 = await startChild(t, 1, uuids[0]!, []);
  const n2 = await startChild(t, 2, uuids[1]!, [n1.addr]);
  const n3 = await startChild(t, 3, uuids[2]!, [n2.addr]); // learns node 1 through gossip
  await waitFor('every node sees the other two', () => alive(n1).join() === '2,3' && alive(n2).join() === '1,3' && alive(n3).join() === '1,2', 30_000);

  const killedAt = Date.now();
  n3.proc.kill('SIGKILL');
  await n3.exited;
  await waitFor('nodes 1 and 2 declare node 3 not alive', () => alive(n1).join() === '2' && alive(n2).join() === '1', FAILURE_MS + SLACK_MS);
  for (const n of [n1, n2]) {
    const down = n.events.find((e) => e.down === 3)!;
    t.equal(down.reason, 'timeout');
    const after = down.at - killedAt;
    t.ok(after >= FAILURE_MS - 2 * HEARTBEAT_MS, `node ${n.id}: not before the failure timeout (${after} ms)`);
    t.ok(after <= FAILURE_MS + SLACK_MS, `node ${n.id}: within the failure timeout plus slack (${after} ms)`);
  }
  t.strictSame(alive(n1), [2], 'node 2 stayed alive throughout');
  t.notOk(n1.events.some((e) => e.down === 2), 'no false alarm for node 2');

  const back = await startChild(t, 3, uuids[2]!, [n1.addr]);
  await waitFor('node 3 alive again everywhere', () => alive(n1).join() === '2,3' && alive(n2).join() === '1,3' && alive(back).join() === '1,2', 30_000);
  t.pass('node 3 rejoined');

  // A graceful stop is seen at once, not after the timeout.
  const stoppedAt = Date.now();
  back.proc.kill('SIGTERM');
  await back.exited;
  await waitFor('node 3 left', () => alive(n1).join() === '2' && alive(n2).join() === '1', FAILURE_MS + SLACK_MS);
  const left = n1.events.filter((e) => e.down === 3).at(-1)!;
  t.equal(left.reason, 'leaving');
  t.ok(left.at - stoppedAt < FAILURE_MS + SLACK_MS);
});

t.test('killed mid-stream: the reader fails at once with a retriable error, not at its timeout', async (t) => {
  const n1 = await startChild(t, 1, randomUUID(), []);
  const n2 = await startChild(t, 2, randomUUID(), [n1.addr]);
  // This test process joins the same cluster as node 10.
  const me = await startMember(t, 10, [n1.addr], { clusterId: 'child-cluster', heartbeatIntervalMs: HEARTBEAT_MS, failureTimeoutMs: FAILURE_MS, requestTimeoutMs: 60_000 });
  await waitFor('node 10 sees both children', () => me.m.isAlive(1) && me.m.isAlive(2), 30_000);
  t.equal(await me.m.request(2, 'pid', null), n2.proc.pid);
  const got: number[] = [];
  let failure: LogsvcError | null = null;
  let killedAt = 0;
  try {
    for await (const c of me.m.stream(2, 'ticks', null, { window: 4, timeoutMs: 60_000 })) {
      got.push((c as { i: number }).i);
      if (got.length === 20) {
        killedAt = Date.now();
        n2.proc.kill('SIGKILL');
      }
    }
  } catch (e) {
    failure = e as LogsvcError;
  }
  const after = Date.now() - killedAt;
  t.match(failure, { code: 'E_UNAVAILABLE', retriable: true, message: /connection to node 2 ended/ });
  t.ok(after < 30_000, `failed at the kill, not at the 60 s timeout (${after} ms)`);
  t.strictSame(got, Array.from({ length: got.length }, (_, i) => i), 'the chunks before the kill, in order, none twice');
  await t.rejects(me.m.request(2, 'pid', null), { code: 'E_UNAVAILABLE' }, 'no connection, no waiting');
  t.equal(await me.m.request(1, 'pid', null), n1.proc.pid, 'the other node still answers');
});
