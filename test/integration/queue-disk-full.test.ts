/**
 * A disk that fills up mid-write makes writes short without an error. The digest queue must then
 * refuse (not acknowledge) what did not reach the disk, and fail for good. Run in a child process
 * with a file-size limit (`ulimit -f`), against the built queue in dist/.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv, tempDir } from '../helpers/node-process.js';

const QUEUE = fileURLToPath(new URL('../../dist/queue/embedded-queue.js', import.meta.url));

const SCRIPT = `
import { EmbeddedDigestQueue } from ${JSON.stringify(QUEUE)};
const [dir, mode] = process.argv.slice(2);
const logger = { debug() {}, info() {}, warn() {}, error() {} };
const q = await EmbeddedDigestQueue.open({ dir, partitions: 1, logger, onFatal: () => console.log('FATAL') });
if (mode === 'write') {
  await Promise.all(Array.from({ length: 8 }, (_, i) =>
    q.append(0, Buffer.alloc(200 * 1024, 65 + i)).then((o) => console.log('ACK', i, o), () => console.log('REJECT', i))));
} else {
  for await (const r of q.read(0, 0)) console.log('READ', r.payload[0] - 65, r.offset);
}
await q.close();
`;

function run(script: string, args: string[], ulimitKb?: number): Promise<string> {
  // SIGXFSZ ignored: the write then fails with EFBIG, as a full disk fails with ENOSPC (no signal).
  // Without the test runner's NODE_OPTIONS: its coverage hook would itself hit the file-size limit.
  const cmd = ulimitKb === undefined ? `env -u NODE_OPTIONS node ${script} ${args.join(' ')}` : `trap '' XFSZ; ulimit -f ${ulimitKb}; env -u NODE_OPTIONS node ${script} ${args.join(' ')}`;
  const proc = spawn('bash', ['-c', cmd], { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
  return new Promise((resolve) => proc.on('exit', () => (clearTimeout(timer), resolve(out))));
}

t.test('a short write (file-size limit) is never acknowledged; everything acknowledged reads back', async (t) => {
  const dir = await tempDir(t);
  const script = join(dir, 'q.mjs');
  await writeFile(script, SCRIPT);
  const queueDir = join(dir, 'queue');
  const wrote = await run(script, [queueDir, 'write'], 1024);
  const acked = [...wrote.matchAll(/^ACK (\d+)/gm)].map((m) => Number(m[1]));
  const rejected = [...wrote.matchAll(/^REJECT (\d+)/gm)].map((m) => Number(m[1]));
  t.equal(acked.length + rejected.length, 8, `every append was answered: ${wrote.slice(0, 500)}`);
  t.ok(rejected.length > 0, 'appends past the limit were refused');
  t.match(wrote, /FATAL/, 'the queue reported itself failed');
  const read = await run(script, [queueDir, 'read']);
  const back = new Set([...read.matchAll(/^READ (\d+)/gm)].map((m) => Number(m[1])));
  for (const i of acked) t.ok(back.has(i), `acknowledged record ${i} reads back`);
});
