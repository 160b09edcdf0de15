/**
 * The web UI's serving (built by npm run build into dist/ui): the page with a same-origin CSP and no
 * caching, hashed assets compressed and immutable, nothing else served from the asset path; the UI
 * helper endpoints (query functions, parser trial runs); ui.enabled = false.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { startNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';
import { createRepo } from '../helpers/query.js';

const SIZES = JSON.parse(readFileSync(new URL('../../dist/ui/sizes.json', import.meta.url), 'utf8')) as { raw: number; gzip: number; brotli: number; files: string[] };

t.test('page and assets', async (t) => {
  const node = await startNode(t);
  const page = await api(node.url, '/', { headers: { 'accept-encoding': 'gzip' } });
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /^text\/html/);
  t.equal(page.headers.get('cache-control'), 'no-cache', 'the page is revalidated');
  t.match(page.headers.get('content-security-policy'), /default-src 'self'/);
  t.match(page.headers.get('content-security-policy'), /connect-src 'self'/);
  t.notMatch(page.text, /https?:\/\//, 'the page names no other origin');
  const [js, css] = SIZES.files;
  t.match(page.text, `/ui/assets/${js}`);
  t.match(page.text, `/ui/assets/${css}`);

  // fetch() decodes content-encoding itself: ask raw bytes with node's http via a HEAD-free check of the header.
  const gz = await fetch(`${node.url}/ui/assets/${js}`, { headers: { 'accept-encoding': 'gzip' } });
  t.equal(gz.status, 200);
  t.equal(gz.headers.get('content-encoding'), 'gzip');
  t.equal(gz.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.match(gz.headers.get('content-type'), /^text\/javascript/);
  const body = await gz.text();
  t.ok(body.length > 10_000, 'the bundle');
  const br = await fetch(`${node.url}/ui/assets/${css}`, { headers: { 'accept-encoding': 'br, gzip' } });
  t.equal(br.headers.get('content-encoding'), 'br', 'brotli preferred when accepted');
  t.match(await br.text(), /\.u-over|uplot/, 'uPlot styles are in the bundle');
  t.equal(brotliDecompressSync(readFileSync(new URL(`../../dist/ui/${css}.br`, import.meta.url))).length, readFileSync(new URL(`../../dist/ui/${css}`, import.meta.url)).length);
  t.equal(gunzipSync(readFileSync(new URL(`../../dist/ui/${js}.gz`, import.meta.url))).length, readFileSync(new URL(`../../dist/ui/${js}`, import.meta.url)).length);
  const plain = await fetch(`${node.url}/ui/assets/${css}`, { headers: { 'accept-encoding': 'identity' } });
  t.equal(plain.headers.get('content-encoding'), null, 'uncompressed for clients that do not accept either');

  for (const name of ['nope.js', 'index.html', `${js}.gz`, '..%2Fbuild-info.json', 'sizes.json.br']) {
    t.equal((await api(node.url, `/ui/assets/${name}`)).status, 404, `no asset ${name}`);
  }
  t.ok(SIZES.gzip < 1024 * 1024, `assets under 1 MB compressed (${SIZES.gzip} bytes gzip)`);
});

t.test('query functions and parser trial runs', async (t) => {
  const node = await startNode(t);
  await createRepo(node.url, node.adminToken, 'p');
  const fns = (await api(node.url, '/api/v1/ui/query-functions')).json<{ name: string; params: string[]; aggregate: boolean }[]>();
  t.ok(fns.some((f) => f.name === 'groupBy' && f.aggregate && f.params.includes('function')));
  t.ok(fns.some((f) => f.name === 'kvParse' && !f.aggregate));

  const tryIt = (body: unknown) => api(node.url, '/api/v1/repositories/p/parsers/try', { token: node.adminToken, body: JSON.stringify(body) });
  const ok = await tryIt({ name: 'kv', script: 'kvParse()', testCases: [{ rawString: 'a=1 b=two' }, { rawString: 'x=3', assertions: [{ outputEventIndex: 0, fieldsHaveValues: [{ fieldName: 'x', expectedValue: '4' }] }] }] });
  t.equal(ok.status, 200);
  const r = ok.json();
  t.equal(r.compileError, null);
  t.equal(r.results[0].outputs[0].b, 'two');
  t.equal(r.results[0].outputs[0]['#type'], 'kv');
  t.equal(r.results[0].failure, null);
  t.match(r.results[1].failure, /test case 2 .* field x is "3", expected "4"/);

  const bad = (await tryIt({ script: 'kvParse( | ', testCases: [{ rawString: 'a=1' }] })).json();
  t.match(bad.compileError, /line 1, column/, 'a compile error with its position');
  t.equal((await tryIt({ script: 'kvParse()' })).status, 400, 'testCases required');
  t.equal((await api(node.url, '/api/v1/repositories/p/parsers/try', { body: '{"script":"","testCases":[]}' })).status, 401);
  t.equal((await api(node.url, '/api/v1/repositories/nope/parsers/try', { token: node.adminToken, body: '{"script":"","testCases":[]}' })).status, 404);
  t.equal((await tryIt({ script: 'x'.repeat(70_000), testCases: [] })).status, 400, 'script bound');
  // Nothing was saved.
  t.equal((await api(node.url, '/graphql', { token: node.adminToken, body: JSON.stringify({ query: '{ repository(name: "p") { parsers { name isBuiltIn } } }' }) })).json().data.repository.parsers.filter((p: { isBuiltIn: boolean }) => !p.isBuiltIn).length, 0);
});

t.test('ui.enabled = false', async (t) => {
  const node = await startNode(t, { config: '[ui]\nenabled = false\n' });
  t.equal((await api(node.url, '/')).status, 404);
});
