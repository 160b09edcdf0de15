#!/usr/bin/env node
/**
 * Hostile-client memory benchmarks (issue 24), each run against two builds side by side in one run
 * (A: another checkout's bin/logsvc given with --base, B: this checkout) so the ratio holds on a
 * shared machine. Every node binds 127.0.0.1:0 with a temp data dir and is stopped by its PID.
 *
 *   unauth   N connections each sending a 32 MiB body with no token (defect 3): peak node RSS,
 *            answers, and how much of its body each client had sent when the answer came.
 *   lookup   a CSV lookup file of --mb MB uploaded once, then --parallel at once, then one with
 *            too many columns (defect 9): peak RSS above the idle node, and the answers.
 *
 *   node bench/hostile/clients.mjs unauth [--connections 100] [--base /path/to/other/bin/logsvc]
 *   node bench/hostile/clients.mjs lookup [--mb 60] [--parallel 4] [--kind csv|json] [--base ...]
 *
 * --kind json uploads a JSON array of flat objects of the same rows (and, for the refusal phase, a
 * JSON file whose first row nests too deeply, followed by --mb/3 MB of rows).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readVmRss } from '../lib/processes.mjs';

const HERE_BIN = fileURLToPath(new URL('../../bin/logsvc', import.meta.url));
const MiB = 1024 * 1024;

function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : process.argv[i + 1];
}

/** Starts a node of `bin` with `config`; returns { url, pid, token, stop }. */
async function startNode(bin, config) {
  const root = await mkdtemp(join(tmpdir(), 'logsvc-hostile-'));
  await writeFile(join(root, 'c.toml'), config);
  const proc = spawn(process.execPath, [bin, 'node', '--host', '127.0.0.1', '--port', '0', '--data-dir', join(root, 'data'), '--config', join(root, 'c.toml')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (err = (err + d).slice(-8000)));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready in 60 s: ${err}`)), 60_000);
    proc.stdout.on('data', () => {
      const m = /ready at (http:\/\/\S+) /.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.once('exit', (c) => reject(new Error(`exited ${c}: ${err}`)));
  });
  const token = (await readFile(join(root, 'data', 'local-admin-token.txt'), 'utf8')).trim();
  return {
    url,
    pid: proc.pid,
    token,
    alive: () => proc.exitCode === null && proc.signalCode === null,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 30_000);
        await new Promise((r) => proc.once('exit', r));
        clearTimeout(t);
      }
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Samples a pid's RSS every 50 ms until stopped; returns the peak. */
function sampleRss(pid) {
  let peak = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const r = await readVmRss(pid);
      if (r !== null && r > peak) peak = r;
      await new Promise((res) => setTimeout(res, 50));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return peak;
    },
  };
}

/** One raw POST: headers, then the body in 1 MiB writes (with backpressure) until answered or sent. */
function hostilePost(url, path, headers, length, deadlineMs) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const s = connect(Number(port), hostname);
    let sent = 0;
    let answer = '';
    let done = false;
    const chunk = Buffer.alloc(MiB, 0x61);
    const finish = (status) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      resolve({ status, sentBytes: sent });
    };
    const timer = setTimeout(() => finish('timeout'), deadlineMs);
    s.on('error', () => finish(answer === '' ? 'reset' : Number(answer.slice(9, 12))));
    s.on('close', () => finish(answer === '' ? 'closed' : Number(answer.slice(9, 12))));
    s.on('data', (d) => {
      answer += d.toString('latin1');
      if (answer.includes('\r\n\r\n')) finish(Number(answer.slice(9, 12)));
    });
    s.on('connect', () => {
      s.write([`POST ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, `Content-Length: ${length}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n'));
      const pump = () => {
        while (!done && sent < length) {
          const n = Math.min(MiB, length - sent);
          sent += n;
          if (!s.write(n === MiB ? chunk : chunk.subarray(0, n))) {
            s.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
  });
}

async function unauth(bin, label, connections) {
  const node = await startNode(bin, '[health]\ngrace_period_seconds = 0\n');
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const idle = await readVmRss(node.pid);
    const rss = sampleRss(node.pid);
    const t0 = Date.now();
    const results = await Promise.all(Array.from({ length: connections }, () => hostilePost(node.url, '/api/v1/ingest/humio-structured', { 'content-type': 'application/json' }, 32 * MiB, 120_000)));
    const ms = Date.now() - t0;
    const peak = await rss.stop();
    const statuses = {};
    for (const r of results) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    const sent = results.map((r) => r.sentBytes).sort((a, b) => a - b);
    const status = await fetch(`${node.url}/api/v1/status`).then((r) => r.status, () => 'no answer');
    console.log(`${label}: ${connections} x 32 MiB without a token: idle RSS ${(idle / MiB).toFixed(0)} MB, peak RSS ${(peak / MiB).toFixed(0)} MB, answers ${JSON.stringify(statuses)}, body sent before the answer median ${(sent[sent.length >> 1] / MiB).toFixed(1)} MiB, all done in ${ms} ms; /api/v1/status ${status}`);
    return { idle, peak, statuses };
  } finally {
    await node.stop();
  }
}

function csv(mb, columns) {
  const header = Array.from({ length: columns }, (_, i) => `c${i}`).join(',');
  const rows = [header];
  let size = header.length + 1;
  for (let i = 0; size < mb * MiB; i++) {
    const row = Array.from({ length: columns }, (_, j) => (j === 0 ? `key-${i}` : `value-${(i * 7919 + j) % 100000}`)).join(',');
    rows.push(row);
    size += row.length + 1;
  }
  return Buffer.from(rows.join('\n') + '\n');
}

/** The rows csv() makes, as a JSON array of flat objects, one row a line. */
function json(mb, columns) {
  const rows = [];
  let size = 2;
  for (let i = 0; size < mb * MiB; i++) {
    const row = JSON.stringify(Object.fromEntries(Array.from({ length: columns }, (_, j) => [`c${j}`, j === 0 ? `key-${i}` : `value-${(i * 7919 + j) % 100000}`])));
    rows.push(row);
    size += row.length + 2;
  }
  return Buffer.from(`[\n${rows.join(',\n')}\n]\n`);
}

function multipart(name, content) {
  const b = 'HoStIlEbOuNdArY';
  return {
    type: `multipart/form-data; boundary=${b}`,
    body: Buffer.concat([Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/csv\r\n\r\n`), content, Buffer.from(`\r\n--${b}--\r\n`)]),
  };
}

async function lookup(bin, label, mb, parallel, file, wide, ext) {
  // Each phase on a fresh node: RSS seldom falls back, so a peak would carry over.
  const phases = [
    ['one', 1, file],
    [`${parallel} at once`, parallel, file],
    [ext === 'csv' ? 'too many columns' : 'nested too deeply', 1, wide],
  ];
  const out = {};
  for (const [phase, count, content] of phases) {
    const node = await startNode(bin, `[health]\ngrace_period_seconds = 0\n[files]\nmax_file_bytes = ${256 * MiB}\nmax_rows = 10000000\n`);
    try {
      const post = async (name, m) => {
        const r = await fetch(`${node.url}/api/v1/uploadedfiles/shared`, { method: 'POST', headers: { authorization: `Bearer ${node.token}`, 'content-type': m.type }, body: m.body, signal: AbortSignal.timeout(300_000) }).catch((e) => ({ status: String(e.cause?.code ?? e.name) }));
        return `${r.status}`;
      };
      await new Promise((r) => setTimeout(r, 1000));
      const idle = await readVmRss(node.pid);
      const rss = sampleRss(node.pid);
      const t0 = Date.now();
      // Distinct contents (the first byte of the first key differs), so no upload reuses another's table.
      const statuses = await Promise.all(
        Array.from({ length: count }, (_, i) => {
          const c = Buffer.from(content);
          if (i > 0) c[c.indexOf('key-')] = 0x41 + i;
          return post(`f${i}.${ext}`, multipart(`f${i}.${ext}`, c));
        }),
      );
      const peak = await rss.stop();
      const status = await fetch(`${node.url}/api/v1/status`).then((r) => r.status, () => 'no answer');
      out[phase] = { peak, statuses };
      console.log(`${label}: ${phase} (${(content.length / 1e6).toFixed(0)} MB ${ext.toUpperCase()}): idle RSS ${(idle / MiB).toFixed(0)} MB, peak ${(peak / MiB).toFixed(0)} MB (+${((peak - idle) / MiB).toFixed(0)}), answers ${statuses.join(' ')}, ${Date.now() - t0} ms; /api/v1/status ${status}`);
    } finally {
      await node.stop();
    }
  }
  return out;
}

const task = process.argv[2];
const base = arg('base', null);
console.log(`# node bench/hostile/clients.mjs ${process.argv.slice(2).join(' ')}`);
console.log(`# ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${new Date().toISOString()}; a shared machine`);
const builds = base === null ? [[HERE_BIN, 'this build']] : [[base, 'A (base)'], [HERE_BIN, 'B (this build)']];
if (task === 'unauth') {
  const n = Number(arg('connections', '100'));
  for (const [bin, label] of builds) await unauth(bin, label, n);
} else if (task === 'lookup') {
  const mb = Number(arg('mb', '60'));
  const parallel = Number(arg('parallel', '4'));
  const ext = arg('kind', 'csv');
  const file = ext === 'json' ? json(mb, 4) : csv(mb, 4);
  const wide = ext === 'json' ? Buffer.concat([Buffer.from('[{"a":{"b":1}},'), json(mb / 3, 4).subarray(1)]) : csv(Math.min(mb, 20), 1500);
  for (const [bin, label] of builds) await lookup(bin, label, mb, parallel, file, wide, ext);
} else {
  console.error('usage: node bench/hostile/clients.mjs unauth|lookup [--base /path/to/bin/logsvc] (see the header)');
  process.exit(2);
}
