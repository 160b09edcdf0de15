#!/usr/bin/env node
// Builds the web UI (src/ui) into dist/ui: one JavaScript and one CSS bundle with content-hashed
// names, index.html naming them, and gzip and brotli copies the node serves as they are.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'dist', 'ui');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const result = await build({
  entryPoints: { app: join(root, 'src/ui/main.tsx') },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  jsx: 'automatic',
  outdir: out,
  entryNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'none',
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
});

const files = Object.keys(result.metafile.outputs).map((f) => basename(f));
const js = files.find((f) => f.endsWith('.js'));
const css = files.find((f) => f.endsWith('.css'));
if (js === undefined || css === undefined) throw new Error(`UI build: expected a .js and a .css bundle, got ${files.join(', ')}`);
const html = readFileSync(join(root, 'src/ui/index.html'), 'utf8').replace('%JS%', js).replace('%CSS%', css);
writeFileSync(join(out, 'index.html'), html);

let raw = 0;
let gz = 0;
let br = 0;
for (const f of readdirSync(out)) {
  if (f.endsWith('.map')) continue;
  const body = readFileSync(join(out, f));
  const g = gzipSync(body, { level: 9 });
  const b = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } });
  writeFileSync(join(out, `${f}.gz`), g);
  writeFileSync(join(out, `${f}.br`), b);
  raw += body.length;
  gz += g.length;
  br += b.length;
}
writeFileSync(join(out, 'sizes.json'), `${JSON.stringify({ raw, gzip: gz, brotli: br, files: [js, css, 'index.html'] })}\n`);
if (process.env.LOGSVC_UI_QUIET === undefined) process.stdout.write(`ui: ${js}, ${css}: ${raw} bytes, ${gz} gzip, ${br} brotli\n`);
