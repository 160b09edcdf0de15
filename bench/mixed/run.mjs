#!/usr/bin/env node
/**
 * Mixed load (issue 24, defect 10): C keep-alive connections against one node, most of them
 * ingesting structured batches of 200 events into repository "mixed" in a loop, the others running
 * queries in a loop for --seconds: one querier in five a large query (count() over everything
 * ingested into "mixed", which grows), the rest small ones (a filtered count() over "small", 2,000
 * events ingested before the run). Small-query latency p50/p99 (what must not wait behind the rest),
 * large-query latency, answers by status, ingest acknowledgements and events/s. Two builds side by side in one run (A: --base, B: this
 * checkout) so the comparison holds on a shared machine. Nodes bind 127.0.0.1:0 and are stopped by PID.
 *
 *   node bench/mixed/run.mjs [--connections 200] [--query-share 0.25] [--seconds 30] [--base /path/bin/logsvc]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';

const HERE_BIN = fileURLToPath(new URL('../../bin/logsvc', import.meta.url));
const arg = (n, d) => {
  const i = process.argv.indexOf(`--${n}`);
  return i < 0 ? d : process.argv[i + 1];
};

async function startNode(bin, extra = '') {
  const root = await mkdtemp(join(tmpdir(), 'logsvc-mixed-'));
  await writeFile(join(root, 'c.toml'), `[health]\ngrace_period_seconds = 0\n${extra}`);
  const proc = spawn(process.execPath, [bin, 'node', '--host', '127.0.0.1', '--port', '0', '--data-dir', join(root, 'data'), '--config', join(root, 'c.toml')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', () => undefined);
  const url = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('not ready')), 60_000);
    proc.stdout.on('data', () => {
      const m = /ready at (http:\/\/\S+) /.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]);
      }
    });
  });
  const token = (await readFile(join(root, 'data', 'local-admin-token.txt'), 'utf8')).trim();
  return {
    url,
    token,
    async stop() {
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 30_000);
      await new Promise((r) => proc.once('exit', r));
      clearTimeout(t);
      await rm(root, { recursive: true, force: true });
    },
  };
}

const pct = (xs, p) => (xs.length === 0 ? NaN : xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]);

async function run(bin, label, connections, share, seconds, extra) {
  const node = await startNode(bin, extra);
  const agent = new Agent({ connections, pipelining: 1 });
  try {
    const gql = async (query) => {
      const r = await request(`${node.url}/graphql`, { dispatcher: agent, method: 'POST', headers: { authorization: `Bearer ${node.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
      return r.body.json();
    };
    const tok = await gql('mutation { createRepository(name: "mixed") { repository { ingestTokens { token } } } }');
    const ingestToken = tok.data?.createRepository?.repository?.ingestTokens?.[0]?.token;
    if (typeof ingestToken !== 'string') throw new Error(`no ingest token: ${JSON.stringify(tok)}`);
    const small = await gql('mutation { createRepository(name: "small") { repository { ingestTokens { token } } } }');
    const smallToken = small.data.createRepository.repository.ingestTokens[0].token;
    const batch = (n) => JSON.stringify([{ tags: { host: `h${n % 8}` }, events: Array.from({ length: 200 }, (_, i) => ({ timestamp: Date.now(), attributes: { n, i, status: 200 + (i % 5), path: `/p/${i % 50}` }, rawstring: `n=${n} i=${i} status=${200 + (i % 5)} path=/p/${i % 50}` })) }]);
    for (let k = 0; k < 10; k++) {
      const r = await request(`${node.url}/api/v1/ingest/humio-structured`, { dispatcher: agent, method: 'POST', headers: { authorization: `Bearer ${smallToken}`, 'content-type': 'application/json' }, body: batch(k) });
      await r.body.text();
    }
    await new Promise((r) => setTimeout(r, 3000));
    const deadline = Date.now() + seconds * 1000;
    const lat = [];
    const largeLat = [];
    const qStatus = {};
    const iStatus = {};
    const queryLoop = async (_, q) => {
      const large = q % 5 === 0;
      while (Date.now() < deadline) {
        const t0 = performance.now();
        let status;
        try {
          const r = await request(`${node.url}/api/v1/repositories/${large ? 'mixed' : 'small'}/query`, { dispatcher: agent, method: 'POST', headers: { authorization: `Bearer ${node.token}`, 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ queryString: large ? 'count()' : 'status=200 | count()', start: '1h' }), headersTimeout: 120_000, bodyTimeout: 120_000 });
          await r.body.text();
          status = r.statusCode;
        } catch (e) {
          status = e.code ?? 'error';
        }
        const ms = performance.now() - t0;
        qStatus[status] = (qStatus[status] ?? 0) + 1;
        if (status === 200) (large ? largeLat : lat).push(ms);
        if (status === 429) await new Promise((r) => setTimeout(r, 200));
      }
    };
    let n = 0;
    const ingestLoop = async () => {
      while (Date.now() < deadline) {
        let status;
        try {
          const r = await request(`${node.url}/api/v1/ingest/humio-structured`, { dispatcher: agent, method: 'POST', headers: { authorization: `Bearer ${ingestToken}`, 'content-type': 'application/json' }, body: batch(n++), headersTimeout: 120_000 });
          await r.body.text();
          status = r.statusCode;
        } catch (e) {
          status = e.code ?? 'error';
        }
        iStatus[status] = (iStatus[status] ?? 0) + 1;
        if (status !== 200) await new Promise((r) => setTimeout(r, 200));
      }
    };
    const queriers = Math.round(connections * share);
    await Promise.all([...Array.from({ length: queriers }, (_, q) => queryLoop(_, q)), ...Array.from({ length: connections - queriers }, ingestLoop)]);
    lat.sort((a, b) => a - b);
    largeLat.sort((a, b) => a - b);
    const ingested = 200 * (iStatus[200] ?? 0);
    console.log(`${label}: ingest ${ingested} events acknowledged, ${Math.round(ingested / seconds)} events/s; small queries p50 ${pct(lat, 50).toFixed(0)} ms, p99 ${pct(lat, 99).toFixed(0)} ms`);
    console.log(`${label}: ${connections} connections (${queriers} querying, ${connections - queriers} ingesting 200-event batches), ${seconds} s: small queries ${lat.length} answered, p50 ${pct(lat, 50).toFixed(0)} ms, p99 ${pct(lat, 99).toFixed(0)} ms, max ${lat.at(-1)?.toFixed(0)} ms; large queries ${largeLat.length} answered, p50 ${pct(largeLat, 50).toFixed(0)} ms, p99 ${pct(largeLat, 99).toFixed(0)} ms; query answers ${JSON.stringify(qStatus)}; ingest answers ${JSON.stringify(iStatus)}`);
  } finally {
    await agent.close();
    await node.stop();
  }
}

const connections = Number(arg('connections', '200'));
const share = Number(arg('query-share', '0.25'));
const seconds = Number(arg('seconds', '30'));
const base = arg('base', null);
console.log(`# node bench/mixed/run.mjs ${process.argv.slice(2).join(' ')}`);
console.log(`# ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${new Date().toISOString()}; a shared machine`);
// --b-config: TOML lines for this build's node only (options the base does not know), e.g. "[query]\nmax_concurrent_per_user = 16".
const extra = (arg('b-config', '') ?? '').replace(/\\n/g, '\n');
for (const [bin, label, x] of base === null ? [[HERE_BIN, 'this build', extra]] : [[base, 'A (base)', ''], [HERE_BIN, `B (this build${extra === '' ? '' : `, ${extra.replace(/\n/g, ' ')}`})`, extra]]) await run(bin, label, connections, share, seconds, x);
