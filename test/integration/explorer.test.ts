/**
 * The GraphQL explorer at /docs/api-explorer: an HTML page whose scripts and styles all come from the
 * node itself (no CDN), served plain or gzip-compressed, and switched off by `[graphql] explorer = false`.
 */
import t from 'tap';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { startNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';

const node = await startNode(t);
const PAGE = '/docs/api-explorer';

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** GET with node:http: no automatic Accept-Encoding and no transparent decompression. */
function rawGet(base: string, path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, base), { method: 'GET', headers, timeout: 15_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** Every `<script src>` and `<link href>` of an HTML page. */
function references(html: string): { tag: string; url: string }[] {
  const out: { tag: string; url: string }[] = [];
  for (const m of html.matchAll(/<script\b[^>]*?\bsrc\s*=\s*["']([^"']*)["']/gi)) out.push({ tag: 'script', url: m[1]! });
  for (const m of html.matchAll(/<link\b[^>]*?\bhref\s*=\s*["']([^"']*)["']/gi)) out.push({ tag: 'link', url: m[1]! });
  return out;
}

const expectedType = (url: string): RegExp => (url.endsWith('.css') ? /^text\/css\b/ : /^(text|application)\/javascript\b/);

let page = '';

t.test('the page is HTML, public, and refers only to this origin', async (t) => {
  const res = await api(node.url, PAGE);
  t.equal(res.status, 200, 'no authentication needed');
  t.match(res.headers.get('content-type'), /^text\/html\b/);
  t.match(res.headers.get('content-security-policy'), /default-src 'self'/, 'a CSP that only allows this origin');
  t.notMatch(res.headers.get('content-security-policy') ?? '', /https?:|\*/, 'the CSP names no other host');
  t.equal(res.headers.get('x-content-type-options'), 'nosniff');
  page = res.text;
  t.match(page, /^<!doctype html>/i);
  t.match(page, /<div id="graphiql">/);

  const refs = references(page);
  t.ok(refs.filter((r) => r.tag === 'script').length >= 3, 'several scripts');
  t.ok(refs.some((r) => r.tag === 'link' && r.url.endsWith('.css')), 'a stylesheet');
  for (const r of refs) {
    t.match(r.url, /^\/[^/]/, `${r.tag} ${r.url}: a same-origin absolute path`);
    t.notMatch(r.url, /^\/\/|^[a-z][a-z0-9+.-]*:/i, `${r.tag} ${r.url}: no scheme and no protocol-relative host`);
  }
  t.notMatch(page, /https?:\/\//, 'the page names no http(s) URL at all');
  t.notMatch(page, /(src|href)\s*=\s*["']\/\//i, 'no protocol-relative URL');
  // Nothing inline can reach another host either: the only inline content is a <style>.
  t.notMatch(page, /<script(?![^>]*\bsrc=)[^>]*>/i, 'no inline script');
});

t.test('every referenced asset is served, plain and gzip-compressed', async (t) => {
  const refs = references(page);
  t.ok(refs.length >= 4);
  for (const { url } of refs) {
    await t.test(url, async (t) => {
      // fetch: sends Accept-Encoding itself and decompresses transparently.
      const viaFetch = await api(node.url, url);
      t.equal(viaFetch.status, 200, `${url}: 200 via fetch`);
      t.match(viaFetch.headers.get('content-type'), expectedType(url), `${url}: content-type`);
      t.ok(viaFetch.text.length > 0, `${url}: not empty`);
      if (viaFetch.status !== 200) t.comment(`${url}: ${viaFetch.text.trim()}`);

      const plain = await rawGet(node.url, url);
      t.equal(plain.status, 200, `${url}: 200 without Accept-Encoding`);
      t.match(plain.headers['content-type'], expectedType(url), `${url}: content-type without Accept-Encoding`);
      t.equal(plain.headers['content-encoding'], undefined, `${url}: not compressed when not asked`);
      t.equal(plain.body.toString('utf8'), viaFetch.text, `${url}: the same content either way`);

      const gz = await rawGet(node.url, url, { 'accept-encoding': 'gzip, deflate, br' });
      t.equal(gz.status, 200, `${url}: 200 with Accept-Encoding: gzip`);
      t.equal(gz.headers['content-encoding'], 'gzip', `${url}: content-encoding gzip`);
      t.match(gz.headers.vary, /accept-encoding/i, `${url}: Vary: Accept-Encoding`);
      t.match(gz.headers['content-type'], expectedType(url), `${url}: content-type with gzip`);
      if (gz.headers['content-encoding'] === 'gzip') {
        t.ok(gz.body.length < plain.body.length, `${url}: compressed is smaller`);
        t.ok(gunzipSync(gz.body).equals(plain.body), `${url}: decompresses to the plain content`);
      }
    });
  }

  const pageGz = await rawGet(node.url, PAGE, { 'accept-encoding': 'gzip' });
  t.equal(pageGz.headers['content-encoding'], 'gzip', 'the page itself is compressed too');
  t.equal(gunzipSync(pageGz.body).toString('utf8'), page);
});

t.test('the assets load nothing from other hosts', async (t) => {
  const css = references(page).find((r) => r.url.endsWith('.css'))!;
  const text = (await api(node.url, css.url)).text;
  for (const m of text.matchAll(/url\(\s*["']?([^"')]*)/g)) t.notMatch(m[1], /^(https?:)?\/\//, `css url(${m[1]!.slice(0, 30)}) is local or data:`);
  t.notMatch(text, /@import\s+(url\()?["']?(https?:)?\/\//, 'no @import from another host');

  const init = references(page).find((r) => r.url.endsWith('explorer.js'));
  t.ok(init !== undefined, 'the page has its own init script');
  const js = (await api(node.url, init!.url)).text;
  t.match(js, /\/graphql/, 'the explorer talks to /graphql');
  t.notMatch(js, /https?:\/\//, 'on this origin');
});

t.test('unknown assets are 404', async (t) => {
  for (const name of ['nope.js', 'constructor', '__proto__', 'hasOwnProperty', '..%2F..%2Fpackage.json', '..%2Fpackage.json']) {
    const res = await api(node.url, `${PAGE}/assets/${name}`);
    t.equal(res.status, 404, `${name}: 404`);
    t.match(res.headers.get('content-type'), /^text\/plain/);
  }
  t.equal((await api(node.url, `${PAGE}/assets/../../../package.json`)).status, 404, 'dot segments do not escape');
  t.equal((await api(node.url, `${PAGE}/other`)).status, 404);
  const post = await api(node.url, PAGE, { body: '{}' });
  t.equal(post.status, 405, 'only GET');
});

t.test('[graphql] explorer = false turns it off', async (t) => {
  const off = await startNode(t, { config: '[graphql]\nexplorer = false\n' });
  t.equal((await api(off.url, PAGE)).status, 404, 'the page is 404');
  for (const { url } of references(page)) t.equal((await api(off.url, url)).status, 404, `${url}: 404`);
  // GraphQL itself is unaffected.
  const gql = await api(off.url, '/graphql', { token: off.adminToken, body: JSON.stringify({ query: '{ viewer { username } }' }) });
  t.equal(gql.status, 200);
  t.equal(gql.json().data.viewer.username, 'local-admin');
});
