/**
 * The `logsvc` command line as an operator uses it: `config check`, `node` with a config file and
 * overriding flags, the ready line, stopping on SIGINT/SIGTERM, help, and refusals.
 */
import t, { type Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, childEnv, runCli, startNode, tempDir } from '../helpers/node-process.js';
import { api, gql } from '../helpers/http.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = join(ROOT, 'cluster.example.toml');

async function writeConfig(t: Test, text: string, name = 'config.toml'): Promise<string> {
  const file = join(await tempDir(t, 'logsvc-cli-'), name);
  await writeFile(file, text);
  return file;
}

const exists = (p: string): Promise<boolean> => stat(p).then(
  () => true,
  () => false,
);

/** What fetch fails with once nothing listens (ECONNREFUSED), or 'connected'. */
async function connectOutcome(url: string): Promise<string> {
  try {
    await fetch(new URL('/api/v1/status', url), { signal: AbortSignal.timeout(5000) });
    return 'connected';
  } catch (err) {
    return ((err as { cause?: { code?: string } }).cause?.code ?? String(err)) as string;
  }
}

interface Spawned {
  proc: ChildProcess;
  url: string;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** Starts `logsvc <args>` and waits (bounded) for the ready line; the process is SIGKILLed in teardown if still running. */
async function spawnNode(t: Test, args: string[]): Promise<Spawned> {
  const proc = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  t.teardown(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await exited;
    }
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`not ready within 20 s; stderr:\n${stderr}`));
    }, 20_000);
    const onData = (): void => {
      const m = /ready at (http:\/\/\S+) /.exec(stdout);
      if (m !== null) {
        clearTimeout(timer);
        proc.stdout!.off('data', onData);
        resolve(m[1]!);
      }
    };
    proc.stdout!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ready; stderr:\n${stderr}`));
    });
  });
  return { proc, url, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Sends `signal` and waits (bounded) for the exit code. */
async function signalAndWait(s: Spawned, signal: NodeJS.Signals): Promise<number | null> {
  s.proc.kill(signal);
  const timer = setTimeout(() => s.proc.kill('SIGKILL'), 10_000);
  const code = await s.exited;
  clearTimeout(timer);
  return code;
}

t.test('config check: the example config is OK', async (t) => {
  const r = await runCli(['config', 'check', '--config', EXAMPLE]);
  t.equal(r.code, 0, `exit 0 (${r.stderr})`);
  t.match(r.stdout, /cluster\.example\.toml: OK/);
  t.equal(r.stderr, '');
});

t.test('config check: every problem of a file is printed, each naming its key path', async (t) => {
  const file = await writeConfig(
    t,
    [
      '[bogus]',
      'x = 1',
      '',
      '[node]',
      'colour = "red"',
      'port = "eighty"',
      'id = 0',
      '',
      '[http]',
      'max_json_depth = 5000',
      '',
      '[health]',
      'disk_warn_percent = 95',
      'disk_down_percent = 90',
      '',
    ].join('\n'),
  );
  const cross = await writeConfig(t, '[health]\ndisk_warn_percent = 95\ndisk_down_percent = 90\nevent_latency_warn_seconds = 100\nevent_latency_down_seconds = 50\n');
  const notTable = await writeConfig(t, 'node = 5\n');
  const [r, rc, rn] = await Promise.all([
    runCli(['config', 'check', '--config', file]),
    runCli(['config', 'check', '--config', cross]),
    runCli(['config', 'check', '--config', notTable]),
  ]);
  t.equal(r.code, 1, 'exit 1');
  t.notMatch(r.stdout, /OK/);
  const expected: [string, RegExp][] = [
    ['unknown section', /^\s*bogus: unknown section$/m],
    ['unknown key', /^\s*node\.colour: unknown key$/m],
    ['wrong type', /^\s*node\.port: must be an integer from 0 to 65535 \(got "eighty"\)$/m],
    ['out-of-range value (node.id)', /^\s*node\.id: must be an integer from 1 to 65535 \(got 0\)$/m],
    ['out-of-range value (http.max_json_depth)', /^\s*http\.max_json_depth: must be an integer from 2 to 1000 \(got 5000\)$/m],
    ['cross-check violation', /^\s*health\.disk_down_percent: must not be below health\.disk_warn_percent \(95\)$/m],
  ];
  for (const [what, re] of expected) t.match(r.stderr, re, `the ${what} is printed with its key path`);
  t.match(r.stderr, /has 6 problem\(s\)/, `the header counts all six problems (stderr:\n${r.stderr})`);

  // The cross-check on its own is reported.
  t.equal(rc.code, 1);
  t.match(rc.stderr, /health\.disk_down_percent: must not be below health\.disk_warn_percent \(95\)/);
  t.match(rc.stderr, /health\.event_latency_down_seconds: must not be below health\.event_latency_warn_seconds \(100\)/);
  t.match(rc.stderr, /has 2 problem\(s\)/);

  // A section that is not a table.
  t.equal(rn.code, 1);
  t.match(rn.stderr, /node: must be a \[node\] table/);
});

t.test('config check: invalid TOML, a missing file, no --config', async (t) => {
  const bad = await writeConfig(t, '[node\nport = \n');
  const dup = await writeConfig(t, '[node]\nport = 1\nport = 2\n');
  const missing = join(await tempDir(t), 'no-such.toml');
  const [r, rd, rm, none] = await Promise.all([
    runCli(['config', 'check', '--config', bad]),
    runCli(['config', 'check', '--config', dup]),
    runCli(['config', 'check', '--config', missing]),
    runCli(['config', 'check']),
  ]);
  t.equal(r.code, 1, 'invalid TOML: exit 1');
  t.match(r.stderr, /not valid TOML/);
  t.match(r.stderr, bad, 'the message names the file');

  t.equal(rd.code, 1, 'a duplicate key is invalid TOML: exit 1');
  t.match(rd.stderr, /not valid TOML/);

  t.equal(rm.code, 1, 'a missing file: exit 1');
  t.match(rm.stderr, /cannot read the file \(ENOENT\)/);
  t.match(rm.stderr, 'no-such.toml');

  t.not(none.code, 0, '`config check` without --config fails');
  t.not(none.code, null);
  t.match(none.stderr, /config/);
});

t.test('node with a bad config exits 2 without starting and prints the problems', async (t) => {
  const dir = await tempDir(t);
  const dataDir = join(dir, 'data');
  const file = await writeConfig(t, '[node]\nport = 70000\nlog_level = "loud"\n[graphql]\nexplorer = "yes"\n');
  const r = await runCli(['node', '--config', file, '--data-dir', dataDir]);
  t.equal(r.code, 2, `exit 2 (${r.stderr})`);
  t.notMatch(r.stdout, /ready/);
  t.match(r.stderr, /node\.port: must be an integer from 0 to 65535 \(got 70000\)/);
  t.match(r.stderr, /node\.log_level: must be one of debug, info, warn, error \(got "loud"\)/);
  t.match(r.stderr, /graphql\.explorer: must be true or false \(got "yes"\)/);
  t.notOk(await exists(dataDir), 'the data dir was not even created');
});

t.test('flags override the file; host and id come from the file', async (t) => {
  const dir = await tempDir(t);
  const configDataDir = join(dir, 'from-config');
  // port = 1 would fail to bind (privileged); --port 0 from the helper must win.
  const node = await startNode(t, { config: `[node]\nport = 1\ndata_dir = "${configDataDir}"\nhost = "127.0.0.1"\n` });
  const port = Number(new URL(node.url).port);
  t.not(port, 1, `--port 0 overrides port = 1 (listening on ${port})`);
  t.ok(port > 0);
  t.match(node.url, /^http:\/\/127\.0\.0\.1:\d+$/, 'host from the config file');
  t.equal((await api(node.url, '/api/v1/status')).status, 200);
  t.ok(await exists(join(node.dataDir, 'local-admin-token.txt')), '--data-dir overrides data_dir');
  t.notOk(await exists(configDataDir), 'the data_dir from the file is not used');
  t.equal(await node.stop(), 0);

  // A non-default host from the file is really bound (and only it); --host overrides it.
  const other = await startNode(t, { config: '[node]\nhost = "127.0.0.2"\nid = 7\nname = "seven"\n' });
  t.match(other.url, /^http:\/\/127\.0\.0\.2:\d+$/, 'the ready URL uses host = "127.0.0.2" from the file');
  t.equal((await api(other.url, '/api/v1/status')).status, 200, 'reachable on 127.0.0.2');
  t.equal(await connectOutcome(other.url.replace('127.0.0.2', '127.0.0.1')), 'ECONNREFUSED', 'not bound on 127.0.0.1');
  const nodes = await gql(other.url, other.adminToken, '{ cluster { nodes { id name uri } ingestPartitions { id nodeIds } } }');
  t.same(nodes.data.cluster.nodes, [{ id: 7, name: 'seven', uri: other.url }], 'node id and name from the file');
  t.same(nodes.data.cluster.ingestPartitions[0], { id: 0, nodeIds: [7] }, 'the default layout uses node id 7');
  t.equal(await other.stop(), 0);

  const overridden = await startNode(t, { config: '[node]\nhost = "127.0.0.2"\n', args: ['--host', '127.0.0.3'] });
  t.match(overridden.url, /^http:\/\/127\.0\.0\.3:\d+$/, '--host overrides host from the file');
  t.equal((await api(overridden.url, '/api/v1/status')).status, 200);
  t.equal(await overridden.stop(), 0);
});

t.test('the ready line, and SIGINT / SIGTERM stop the node with exit code 0', async (t) => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    const dataDir = await tempDir(t);
    const s = await spawnNode(t, ['node', '--port', '0', '--data-dir', dataDir]);
    const status = await api(s.url, '/api/v1/status');
    t.equal(status.status, 200);
    for (let i = 0; i < 5; i++) await api(s.url, '/api/v1/status');
    const lines = s.stdout().split('\n').filter((l) => l !== '');
    t.equal(lines.length, 1, `exactly one line on stdout (${JSON.stringify(s.stdout())})`);
    const m = /^logsvc node 1 ready at http:\/\/127\.0\.0\.1:(\d+) \(data dir (.+), version (\S+)\)$/.exec(lines[0] ?? '');
    t.ok(m, `the ready line has the documented format: ${lines[0]}`);
    if (m !== null) {
      t.equal(`http://127.0.0.1:${m[1]}`, s.url);
      t.equal(m[2], resolve(dataDir), 'it names the data dir');
      t.equal(m[3], status.json().version, 'and the version the node reports');
    }
    t.ok(await exists(join(dataDir, 'logsvc.lock')), 'the lock file exists while running');

    const code = await signalAndWait(s, signal);
    t.equal(code, 0, `${signal}: exit code 0`);
    t.match(s.stderr(), new RegExp(`${signal} received, stopping`));
    t.equal(await connectOutcome(s.url), 'ECONNREFUSED', `after ${signal} nothing listens (connection refused)`);
    t.notOk(await exists(join(dataDir, 'logsvc.lock')), 'the lock file is removed');
    t.equal(s.stdout().split('\n').filter((l) => l !== '').length, 1, 'still only the ready line on stdout');
  }
});

t.test('help, version, unknown commands and flags', async (t) => {
  const dataDir = join(await tempDir(t), 'd');
  // Independent processes: run them side by side.
  const [help, nodeHelp, checkHelp, version, unknown, noCommand, unknownFlag] = await Promise.all([
    runCli(['--help']),
    runCli(['node', '--help']),
    runCli(['config', 'check', '--help']),
    runCli(['--version']),
    runCli(['frobnicate']),
    runCli([]),
    runCli(['node', '--port', '0', '--data-dir', dataDir, '--frobnicate'], 60_000),
  ]);
  t.equal(help.code, 0, '--help: exit 0');
  t.match(help.stdout, /logsvc node/);
  t.match(help.stdout, /logsvc config/);
  t.match(help.stdout, /--help/);
  t.match(help.stdout, /--version/);

  t.equal(nodeHelp.code, 0, 'node --help: exit 0');
  for (const opt of ['--config', '--host', '--port', '--data-dir']) t.match(nodeHelp.stdout, opt, `node --help lists ${opt}`);
  t.notMatch(nodeHelp.stdout, /ready at/, 'node --help does not start a node');

  t.equal(checkHelp.code, 0, 'config check --help: exit 0');
  t.match(checkHelp.stdout, /--config/);

  t.equal(version.code, 0);
  t.match(version.stdout.trim(), /^\d+\.\d+\.\d+--build-\d+--sha-[0-9a-f]+$/);

  t.not(unknown.code, 0, `an unknown command exits non-zero (${unknown.code})`);
  t.not(unknown.code, null, 'by itself');
  t.match(unknown.stderr, /frobnicate/);

  t.not(noCommand.code, 0, 'no command: non-zero');
  t.match(noCommand.stderr, /name a command/);

  t.not(unknownFlag.code, 0, 'an unknown flag: non-zero');
  t.not(unknownFlag.code, null, 'and the node does not start (it was not killed by the timeout)');
  t.notMatch(unknownFlag.stdout, /ready at/);
});

t.test('--port 99999 is rejected naming node.port', async (t) => {
  const dataDir = join(await tempDir(t), 'd');
  const [r, notNumber] = await Promise.all([
    runCli(['node', '--port', '99999', '--data-dir', dataDir], 60_000),
    runCli(['node', '--port', 'eighty', '--data-dir', dataDir], 60_000),
  ]);
  t.equal(r.code, 2, `exit 2 (${r.stderr.trim()})`);
  t.match(r.stderr, /node\.port: must be an integer from 0 to 65535 \(got 99999\)/);
  t.notMatch(r.stdout, /ready at/);
  t.notOk(await exists(dataDir), 'no data dir was created');

  t.not(notNumber.code, 0, `--port eighty is rejected (${notNumber.code})`);
  t.not(notNumber.code, null);
  t.match(notNumber.stderr, /node\.port/);
});

t.test('empty strings are not valid for node.data_dir and node.host', async (t) => {
  // Checked with `config check` only: a node started with data_dir = "" would use the working
  // directory as its data dir.
  const emptyDir = await writeConfig(t, '[node]\ndata_dir = ""\n');
  const emptyHost = await writeConfig(t, '[node]\nhost = ""\n');
  const [rd, rh] = await Promise.all([runCli(['config', 'check', '--config', emptyDir]), runCli(['config', 'check', '--config', emptyHost])]);
  t.equal(rd.code, 1, `data_dir = "" is rejected (schema: "a non-empty path"); got exit ${rd.code} ${rd.stdout.trim()}`);
  t.match(rd.stderr, /node\.data_dir/);
  t.equal(rh.code, 1, `host = "" is rejected (schema: "a host name or IP address"); got exit ${rh.code} ${rh.stdout.trim()}`);
  t.match(rh.stderr, /node\.host/);
});

t.test('the example config (with port = 0) passes config check and starts a node', async (t) => {
  const file = await writeConfig(t, (await readFile(EXAMPLE, 'utf8')).replace('port = 8080', 'port = 0'));
  const check = await runCli(['config', 'check', '--config', file]);
  t.equal(check.code, 0, 'the example with port = 0 passes config check');
  const dataDir = await tempDir(t);
  const s = await spawnNode(t, ['node', '--config', file, '--data-dir', dataDir]);
  t.match(s.url, /^http:\/\/127\.0\.0\.1:\d+$/, 'the example config starts a node (port 0 from the file)');
  t.equal(await signalAndWait(s, 'SIGTERM'), 0);
});

t.test('a second SIGTERM during the stop does not cut the drain short', async (t) => {
  const node = await startNode(t);
  const admin = node.adminToken;
  const created = await gql(node.url, admin, 'mutation { createRepository(name: "twice") { repository { ingestTokens { token } } } }');
  const ingestToken = created.data.createRepository.repository.ingestTokens[0].token as string;
  const res = await api(node.url, '/api/v1/ingest/humio-structured', {
    headers: { authorization: `Bearer ${ingestToken}` },
    body: JSON.stringify([{ tags: { host: 'h' }, events: [{ timestamp: 1_700_000_000_000, rawstring: 'drained on stop' }] }]),
  });
  t.equal(res.status, 200);
  // A request stalled mid-body keeps the stop in its drain (up to 5 s), so the second signal lands
  // while the node is still stopping.
  const { request } = await import('node:http');
  const stalled = request(new URL('/graphql', node.url), { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'transfer-encoding': 'chunked' } });
  stalled.on('error', () => undefined);
  stalled.write('{"query":');
  await new Promise((r) => setTimeout(r, 200));
  const exit = new Promise<number | null>((r) => node.proc.once('exit', (code) => r(code)));
  node.proc.kill('SIGTERM');
  // The second signal once the first is being handled (two pending signals would merge into one).
  // Each wait polls the node's log for its line (30 s at most) instead of a fixed time a busy machine
  // can overrun; the stalled request holds the drain, and so the node, for up to 5 s meanwhile.
  const seen = async (what: RegExp): Promise<void> => {
    for (const deadline = Date.now() + 30_000; !what.test(node.stderr()) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 10));
  };
  await seen(/SIGTERM received, stopping/);
  node.proc.kill('SIGTERM');
  // The stalled request ends once the node has handled the second signal (it would end the drain).
  await seen(/received again; still stopping/);
  stalled.destroy();
  t.equal(await exit, 0, 'exit code 0');
  t.match(node.stderr(), /received again; still stopping/);
  await t.rejects(stat(join(node.dataDir, 'logsvc.lock')), { code: 'ENOENT' }, 'the lock was released: the stop ran to its end');
  const verify = await runCli(['segments', 'verify', node.dataDir]);
  t.equal(verify.code, 0, verify.stdout);
  t.match(verify.stdout, /^1 segments, 1 blocks/m, 'the open block was written to a segment');
});
