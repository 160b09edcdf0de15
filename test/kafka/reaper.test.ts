/**
 * A broker and a node a test started do not outlive the test process (test/helpers/reaper.ts): a
 * process that started both through the helpers is killed with SIGKILL, so no teardown of its runs;
 * the broker and the node exit, and their dirs (and the node's config file) are removed.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pidAlive } from '../helpers/kafka-broker.js';
import { sleep } from '../helpers/query.js';

const CHILD = fileURLToPath(new URL('../helpers/reaper-child.ts', import.meta.url));

t.setTimeout(600_000);

interface Started {
  broker: number;
  brokerDir: string;
  node: number;
  nodeDir: string;
}

t.test('kill -9 of a test process ends the broker and the node it started', async (t) => {
  // The same loader as this test (it runs TypeScript), none of tap's reporting.
  const proc = spawn(process.execPath, [...process.execArgv, CHILD], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  let started: Started | null = null;
  t.teardown(async () => {
    // Should the reaper fail, this test leaves nothing behind either.
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    for (const pid of [started?.broker, started?.node]) if (pid !== undefined && pidAlive(pid)) process.kill(pid, 'SIGKILL');
  });
  started = await new Promise<Started>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the child did not start a broker and a node within 5 minutes: ${stderr}`)), 300_000);
    createInterface({ input: proc.stdout! }).once('line', (l) => {
      clearTimeout(timer);
      resolve(JSON.parse(l) as Started);
    });
    proc.once('exit', (code) => reject(new Error(`the child exited (${code}) before it started them: ${stderr}`)));
  });
  t.ok(pidAlive(started.broker), `the broker runs (PID ${started.broker})`);
  t.ok(pidAlive(started.node), `the node runs (PID ${started.node})`);

  proc.kill('SIGKILL');
  await exited;
  t.pass('the process that started them is killed with SIGKILL');
  // Generous: a bound that tells "never" apart from "a little later" on a loaded machine.
  const deadline = Date.now() + 120_000;
  const { broker, node, brokerDir, nodeDir } = started;
  const nodeConfig = `${nodeDir}-config.toml`;
  while ((pidAlive(broker) || pidAlive(node) || existsSync(brokerDir) || existsSync(nodeDir) || existsSync(nodeConfig)) && Date.now() < deadline) await sleep(250);
  t.notOk(pidAlive(node), 'the node is gone');
  t.notOk(pidAlive(broker), 'the broker is gone');
  t.notOk(existsSync(brokerDir), 'the broker\'s dir is removed');
  t.notOk(existsSync(nodeDir), 'the node\'s dir is removed');
  t.notOk(existsSync(nodeConfig), 'and its config file');
});
