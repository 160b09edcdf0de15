import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedDigestQueue, type DigestQueue, type QueueRecord } from '../../../src/queue/index.js';
import { silentLogger } from '../../../src/lib/logger.js';

export async function tempDir(t: { teardown: (fn: () => unknown) => void }, prefix = 'logsvc-queue-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export interface Opened {
  q: EmbeddedDigestQueue;
  fatal: Error[];
}

export async function openQueue(dir: string, partitions = 1, fileBytes?: number): Promise<Opened> {
  const fatal: Error[] = [];
  const q = await EmbeddedDigestQueue.open({
    dir,
    partitions,
    logger: silentLogger,
    ...(fileBytes === undefined ? {} : { fileBytes }),
    onFatal: (e) => fatal.push(e),
  });
  return { q, fatal };
}

export async function readAll(q: DigestQueue, partition: number, from = 0): Promise<QueueRecord[]> {
  const out: QueueRecord[] = [];
  for await (const r of q.read(partition, from)) out.push(r);
  return out;
}

export const partDir = (dir: string, p: number): string => join(dir, `p${String(p).padStart(4, '0')}`);

export async function queueFiles(dir: string, p = 0): Promise<string[]> {
  return (await readdir(partDir(dir, p))).filter((n) => n.endsWith('.dq')).sort();
}

export async function damagedFiles(dir: string, p = 0): Promise<string[]> {
  return (await readdir(partDir(dir, p))).filter((n) => n.includes('.damaged-')).sort();
}

export const fileName = (base: number): string => `${String(base).padStart(20, '0')}.dq`;

/** A deterministic payload of `len` bytes for record `i`. */
export function payload(i: number, len = 40 + (i % 23)): Buffer {
  const b = Buffer.alloc(len);
  for (let j = 0; j < len; j++) b[j] = (i * 31 + j * 7) & 0xff;
  b.write(`#${i}#`, 0, 'latin1');
  return b;
}
