#!/usr/bin/env node
/**
 * Compiles the native modules (native/*.cc, N-API) into dist/native/ with the machine's C++
 * compiler ($CXX, else c++) against the headers that ship with this Node (<prefix>/include/node),
 * so nothing is downloaded. `npm run build` runs it. A machine without a compiler or headers
 * still gets a working logsvc: a module is reported missing here and the JavaScript code is
 * used instead (src/digest/native-block.ts, src/ingest/native-structured.ts), so this exits 0 then.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const headers = join(dirname(process.execPath), '..', 'include', 'node');
const out = join(root, 'dist', 'native');
const modules = [
  { source: 'native/block_builder.cc', target: 'block_builder.node', fallback: 'blocks are built in JavaScript' },
  { source: 'native/structured_ingest.cc', target: 'structured_ingest.node', fallback: 'structured ingest bodies are parsed in JavaScript' },
  { source: 'native/text_search.cc', target: 'text_search.node', fallback: 'text search finds needles in stored bytes in JavaScript' },
  { source: 'native/block_filters.cc', target: 'block_filters.node', fallback: 'block filters are checked block by block in JavaScript' },
  { source: 'native/malloc_trim.cc', target: 'malloc_trim.node', fallback: 'freed malloc memory is not given back after start-up' },
];

mkdirSync(out, { recursive: true });
for (const m of modules) {
  const target = join(out, m.target);
  // A stale module from an earlier build must not outlive a failed one.
  rmSync(target, { force: true });
  if (!existsSync(join(headers, 'node_api.h'))) {
    process.stderr.write(`native: ${m.target} not built: no Node headers at ${headers}; ${m.fallback}\n`);
    continue;
  }
  const cxx = process.env.CXX ?? 'c++';
  const args = ['-O3', '-std=c++17', '-shared', '-fPIC', '-fvisibility=hidden', '-Wall', '-Wextra', `-I${headers}`, '-o', target, join(root, m.source)];
  const r = spawnSync(cxx, args, { stdio: ['ignore', 'inherit', 'inherit'], timeout: 300_000 });
  if (r.status !== 0) {
    rmSync(target, { force: true });
    process.stderr.write(`native: ${m.target} not built (${cxx} ${r.error ? r.error.message : `exited ${r.status ?? r.signal}`}); ${m.fallback}\n`);
  }
}
