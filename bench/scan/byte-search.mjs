/**
 * The substring search of stored bytes (src/query/byte-search.ts) on one run of 0.8 MB of raw
 * lines (the access log, then the JSON set, seeded): the native module (native/text_search.cc)
 * against its JavaScript fallback (`jsFinder`: Buffer.indexOf, and a case-insensitive RegExp over
 * the bytes read as Latin-1), every match counted, best wall µs of 30 in this process.
 *
 *   node bench/scan/byte-search.mjs [--dist DIR]
 */
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createDataset } from '../lib/datasets.mjs';

const { values } = parseArgs({ options: { dist: { type: 'string', default: 'dist' } } });
const at = (p) => import(pathToFileURL(join(resolve(values.dist), p)).href);
const { jsFinder } = await at('query/byte-search.js');
const { nativeFind, nativeFindUnavailable } = await at('query/native-text.js');
const { Needle } = await at('query/text-match.js');
if (nativeFind === null) {
  process.stderr.write(`the native module is not loaded: ${nativeFindUnavailable}\n`);
  process.exit(1);
}
const NEEDLES = [
  ['firefox', true],
  ['ireless', true],
  ['mac os x', true],
  ['failed', true],
  ['eadlockdetec', true],
  ['POST /api/v2/orders/', false],
  ['request failed: ', false],
];
/** Best of 30 wall-clock µs of `f`, and what it returned. */
function best(f) {
  let us = Infinity;
  let out;
  for (let k = 0; k < 30; k++) {
    const t = process.hrtime.bigint();
    out = f();
    us = Math.min(us, Number(process.hrtime.bigint() - t) / 1e3);
  }
  return [us, out];
}
process.stdout.write(`node ${process.version}; best µs of 30 over 0.8 MB of raw lines\n`);
for (const dataset of ['accesslog', 'json']) {
  const gen = createDataset(dataset, 1);
  const lines = [];
  for (let n = 0; n < 0.8e6; ) {
    const r = gen().rawstring;
    lines.push(r);
    n += r.length;
  }
  const buf = Buffer.from(lines.join(''), 'utf8');
  for (const [text, folded] of NEEDLES) {
    const nd = new Needle(text, folded);
    const [js, a] = best(() => {
      const f = jsFinder(buf, nd);
      let c = 0;
      for (let p = f === null ? -1 : f(0); p >= 0; p = f(p + 1)) c++;
      return c;
    });
    const [native, b] = best(() => {
      let c = 0;
      for (let p = nativeFind(buf, 0, nd.bytes, folded); p >= 0; p = nativeFind(buf, p + 1, nd.bytes, folded)) c++;
      return c;
    });
    const same = a === b ? `${a} matches` : `DIFFER ${a} vs ${b}`;
    process.stdout.write(`  ${dataset.padEnd(9)} ${JSON.stringify(text).padEnd(24)} ${folded ? 'folded' : 'exact '}  js ${js.toFixed(0).padStart(5)} µs  native ${native.toFixed(0).padStart(5)} µs  ${same}\n`);
  }
}
