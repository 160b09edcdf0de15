/**
 * In-process cluster membership instances for tests: real TCP on 127.0.0.1 port 0, small timings,
 * a logger that keeps its lines, `waitFor` with a deadline, and stop in teardown.
 */
import { randomUUID } from 'node:crypto';
import { Membership, type MembershipOptions } from '../../src/cluster/index.js';
import { systemClock } from '../../src/lib/clock.js';
import type { Logger } from '../../src/lib/logger.js';
import type { Teardown } from './node-process.js';

export const HEARTBEAT_MS = 100;
export const FAILURE_MS = 1000;

export interface LogLine {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

export function recordingLogger(lines: LogLine[]): Logger {
  const rec = (level: string) => (msg: string, fields?: Record<string, unknown>): void => {
    lines.push({ level, msg, fields: fields ?? {} });
  };
  return { debug: rec('debug'), info: rec('info'), warn: rec('warn'), error: rec('error') };
}

export interface TestMember {
  m: Membership;
  id: number;
  uuid: string;
  /** The advertised cluster address. */
  addr: string;
  /** The port actually bound (differs from `addr` when advertising a proxy). */
  port: number;
  logs: LogLine[];
}

export async function startMember(
  t: Teardown,
  id: number,
  peers: string[],
  over: Partial<MembershipOptions> = {},
): Promise<TestMember> {
  const logs: LogLine[] = [];
  const uuid = over.selfUuid ?? randomUUID();
  const m = new Membership({
    selfId: id,
    selfUuid: uuid,
    clusterId: 'test-cluster',
    uri: `http://127.0.0.1:${8000 + id}`,
    listen: { host: '127.0.0.1', port: 0 },
    peers,
    heartbeatIntervalMs: HEARTBEAT_MS,
    failureTimeoutMs: FAILURE_MS,
    reconnectInitialMs: 50,
    reconnectMaxMs: 500,
    logger: recordingLogger(logs),
    clock: systemClock,
    ...over,
  });
  const { advertise, port } = await m.start();
  t.teardown(() => m.stop());
  return { m, id, uuid, addr: advertise, port, logs };
}

/** Polls `cond` every 20 ms until true; fails with `what` after `timeoutMs`. */
export async function waitFor(what: string, cond: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function aliveSet(m: Membership): number[] {
  return [...m.aliveIds()].sort((a, b) => a - b);
}
