/**
 * The interactive GraphQL explorer at /docs/api-explorer: GraphiQL and React from the installed npm
 * packages, served by the node itself (no CDN), gzip-compressed once on first request. The page sets
 * a Content-Security-Policy that only allows this origin.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { LogsvcError } from '../../lib/errors.js';
import type { Route, RequestInfo, Reply } from '../types.js';

const require = createRequire(import.meta.url);
// react and react-dom do not export their UMD files; locate them next to the package entry point.
const packageFile = (pkg: string, file: string): string => join(dirname(require.resolve(pkg)), file);
const BASE = '/docs/api-explorer';

const INIT_SCRIPT = `(function () {
  // Accept JSON: the node then answers auth refusals as GraphQL errors the explorer can show.
  var fetcher = GraphiQL.createFetcher({ url: new URL('/graphql', window.location.href).toString(), headers: { accept: 'application/json' } });
  var root = ReactDOM.createRoot(document.getElementById('graphiql'));
  root.render(React.createElement(GraphiQL, {
    fetcher: fetcher,
    defaultEditorToolsVisibility: 'headers',
    headerEditorEnabled: true,
    shouldPersistHeaders: true,
    defaultHeaders: '{\\n  "Authorization": "Bearer <your API token>"\\n}',
    defaultQuery: '# An API token goes in the Headers tab below.\\n{\\n  viewer { username isRoot }\\n  repositories { name }\\n}\\n'
  }));
})();
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>logsvc API explorer</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${BASE}/assets/graphiql.min.css">
<style>html, body, #graphiql { height: 100%; margin: 0; }</style>
</head>
<body>
<div id="graphiql">Loading the explorer...</div>
<script src="${BASE}/assets/react.production.min.js"></script>
<script src="${BASE}/assets/react-dom.production.min.js"></script>
<script src="${BASE}/assets/graphiql.min.js"></script>
<script src="${BASE}/assets/explorer.js"></script>
</body>
</html>
`;

interface Asset {
  type: string;
  load: () => Buffer;
}

const ASSETS: Record<string, Asset> = {
  'react.production.min.js': { type: 'text/javascript', load: () => readFileSync(packageFile('react', 'umd/react.production.min.js')) },
  'react-dom.production.min.js': { type: 'text/javascript', load: () => readFileSync(packageFile('react-dom', 'umd/react-dom.production.min.js')) },
  'graphiql.min.js': { type: 'text/javascript', load: () => readFileSync(require.resolve('graphiql/graphiql.min.js')) },
  'graphiql.min.css': { type: 'text/css', load: () => readFileSync(require.resolve('graphiql/graphiql.min.css')) },
  'explorer.js': { type: 'text/javascript', load: () => Buffer.from(INIT_SCRIPT) },
};

const cache = new Map<string, { raw: Buffer; gz: Buffer }>();

function serve(name: string, type: string, load: () => Buffer, req: RequestInfo): Reply {
  let entry = cache.get(name);
  if (entry === undefined) {
    const raw = load();
    entry = { raw, gz: gzipSync(raw) };
    cache.set(name, entry);
  }
  const gzip = /\bgzip\b/.test(req.headers.get('accept-encoding') ?? '');
  // The page's styles include an inline <style>; scripts come only from this origin.
  const headers: Record<string, string> = {
    'content-type': `${type}; charset=utf-8`,
    'cache-control': 'public, max-age=3600',
    'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:",
    'x-content-type-options': 'nosniff',
  };
  if (gzip) headers['content-encoding'] = 'gzip';
  headers.vary = 'accept-encoding';
  return { status: 200, headers, body: gzip ? entry.gz : entry.raw };
}

export function explorerRoutes(): Route[] {
  return [
    { method: 'GET', pattern: BASE, body: 'none', handle: (req) => serve('page', 'text/html', () => Buffer.from(PAGE), req) },
    {
      method: 'GET',
      pattern: `${BASE}/assets/:name`,
      body: 'none',
      handle: (req) => {
        const name = req.params.name!;
        const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
        if (asset === undefined) throw new LogsvcError('E_NOT_FOUND', `no explorer asset named "${name.slice(0, 100)}"`);
        return serve(name, asset.type, asset.load, req);
      },
    },
  ];
}
