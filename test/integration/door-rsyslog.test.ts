/**
 * rsyslog (Debian's rsyslog and rsyslog-elasticsearch packages) as a real shipper: one rsyslogd in
 * the foreground with a config, pid file and work dir of its own reads lines from a file (imfile)
 * and forwards each to a TCP ingest listener (omfwd, octet-counted framing), a UDP ingest listener
 * (omfwd) and the Elasticsearch bulk door (omelasticsearch, bulk mode, the ingest token as
 * password, the product's root `/_bulk`). It is stopped by its PID. Outside CI a missing rsyslogd
 * skips this test with a message; in CI (CI=true) it fails it.
 */
import t from 'tap';

// Real nodes and clients on a shared, loaded machine: more than the default per-file timeout.
t.setTimeout(300_000);
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../helpers/free-port.js';
import { startNode, tempDir } from '../helpers/node-process.js';
import { countOf, createRepo, mustGql, queryJson, sleep } from '../helpers/query.js';

const RSYSLOGD = '/usr/sbin/rsyslogd';
const OMES = '/usr/lib/x86_64-linux-gnu/rsyslog/omelasticsearch.so';
const absent = (existsSync(RSYSLOGD) && existsSync(OMES)) || process.env.CI === 'true' ? false : 'rsyslog and rsyslog-elasticsearch are not installed here (.ci/run installs them)';

t.test('rsyslog: omfwd over TCP and UDP to listeners, omelasticsearch to the bulk door', { skip: absent }, async (t) => {
  const node = await startNode(t, { config: '[health]\ngrace_period_seconds = 600\n[digest]\npartitions = 1\nworker_threads = 1\n[listeners]\nbatch_linger_ms = 5\n' });
  await createRepo(node.url, node.adminToken, 'rsys');
  const es = await createRepo(node.url, node.adminToken, 'rsyses');
  const tcpPort = await freePort();
  const udpPort = await freePort();
  const create = 'mutation($i: CreateIngestListenerV3Input!) { createIngestListenerV3(input: $i) { id } }';
  await mustGql(node.url, node.adminToken, create, { i: { repositoryName: 'rsys', name: 'rs-tcp', protocol: 'TCP', port: tcpPort, bindInterface: '127.0.0.1' } });
  await mustGql(node.url, node.adminToken, create, { i: { repositoryName: 'rsys', name: 'rs-udp', protocol: 'UDP', port: udpPort, bindInterface: '127.0.0.1' } });

  const dir = await tempDir(t, 'logsvc-rsyslog-');
  await mkdir(join(dir, 'work'));
  const input = join(dir, 'in.log');
  await writeFile(input, '');
  const httpPort = new URL(node.url).port;
  const conf = `
global(workDirectory="${dir}/work")
module(load="imfile" mode="polling" PollingInterval="1")
module(load="omelasticsearch")
template(name="es" type="list" option.json="on") {
  constant(value="{\\"@timestamp\\":\\"") property(name="timereported" dateFormat="rfc3339")
  constant(value="\\",\\"message\\":\\"") property(name="msg")
  constant(value="\\",\\"host\\":\\"") property(name="hostname")
  constant(value="\\"}")
}
ruleset(name="out") {
  action(type="omfwd" target="127.0.0.1" port="${tcpPort}" protocol="tcp" TCP_Framing="octet-counted" template="RSYSLOG_SyslogProtocol23Format")
  action(type="omfwd" target="127.0.0.1" port="${udpPort}" protocol="udp")
  action(type="omelasticsearch" server="127.0.0.1" serverport="${httpPort}" searchIndex="rsyslog" bulkmode="on" uid="rsyslog" pwd="${es.ingestToken}" template="es" errorFile="${dir}/es-errors.json")
}
input(type="imfile" File="${input}" Tag="rsystest" Severity="info" Facility="local0" ruleset="out")
`;
  await writeFile(join(dir, 'rsyslog.conf'), conf);
  const proc = spawn(RSYSLOGD, ['-n', '-f', join(dir, 'rsyslog.conf'), '-i', join(dir, 'rsyslogd.pid')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (output += d.toString()));
  t.teardown(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const done = new Promise((r) => proc.once('exit', r));
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await done;
      clearTimeout(timer);
    }
  });
  await sleep(1500);
  t.equal(proc.exitCode, null, `rsyslogd runs (${output.slice(0, 500)})`);
  const lines = Array.from({ length: 20 }, (_, i) => `rsys=${i} hello from rsyslog`);
  await appendFile(input, `${lines.join('\n')}\n`);

  const waitCount = async (repo: string, filter: string, n: number): Promise<number> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const c = await countOf(node.url, repo, node.adminToken, filter, { start: '1d' });
      if (c >= n || Date.now() > deadline) return c;
      await sleep(250);
    }
  };
  t.equal(await waitCount('rsys', '"hello from rsyslog"', 40), 40, `both listeners got every line (${output.slice(0, 500)})`);
  t.equal(await waitCount('rsyses', '"hello from rsyslog"', 20), 20, `omelasticsearch delivered every line (${output.slice(0, 300)})`);
  const errors = existsSync(join(dir, 'es-errors.json')) ? await readFile(join(dir, 'es-errors.json'), 'utf8') : '';
  t.equal(errors, '', 'omelasticsearch reported no errors');
  const [tcp] = await queryJson(node.url, 'rsys', { queryString: 'app=rsystest rsys=3', start: '1d' }, { token: node.adminToken });
  t.ok(tcp, 'the syslog parser read rsyslog\'s RFC 5424 header (app)');
  const [doc] = await queryJson(node.url, 'rsyses', { queryString: 'rsys=3', start: '1d' }, { token: node.adminToken });
  t.equal(doc?.['@rawstring'], 'rsys=3 hello from rsyslog', 'the message is @rawstring');
});
