/**
 * The web UI: `/` answers the page, `/ui/assets/:name` the bundles built by `npm run build`
 * (bin/build-ui.mjs writes dist/ui/ with content-hashed names and gzip/brotli copies). Assets are
 * immutable (their names change with their content); the page is revalidated every time. A
 * Content-Security-Policy allows this origin only: nothing is fetched from anywhere else.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LogsvcError } from '../../lib/errors.js';
import { parseJsonBounded } from '../../lib/json.js';
import { functionSignatures } from '../../query/functions/registry.js';
import type { ParserTestCase } from '../../global/index.js';
import { apiPrincipal, type HttpServices } from '../context.js';
import { json, type Reply, type RequestInfo, type Route } from '../types.js';

const UI_DIR = fileURLToPath(new URL('../../ui/', import.meta.url));
const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', html: 'text/html; charset=utf-8', svg: 'image/svg+xml', png: 'image/png' };
const NAME = /^[A-Za-z0-9._-]{1,128}$/;

interface Asset {
  raw: Buffer;
  gz: Buffer | null;
  br: Buffer | null;
  type: string;
}

const cache = new Map<string, Asset | null>();

function load(name: string): Asset | null {
  if (cache.has(name)) return cache.get(name)!;
  const read = (file: string): Buffer | null => {
    try {
      return readFileSync(join(UI_DIR, file));
    } catch {
      return null;
    }
  };
  const raw = read(name);
  const ext = name.slice(name.lastIndexOf('.') + 1);
  const asset = raw === null ? null : { raw, gz: read(`${name}.gz`), br: read(`${name}.br`), type: TYPES[ext] ?? 'application/octet-stream' };
  cache.set(name, asset);
  return asset;
}

function serve(asset: Asset, req: RequestInfo, cacheControl: string): Reply {
  const accept = req.headers.get('accept-encoding') ?? '';
  const headers: Record<string, string> = {
    'content-type': asset.type,
    'cache-control': cacheControl,
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    vary: 'accept-encoding',
  };
  if (asset.br !== null && /\bbr\b/.test(accept)) return { status: 200, headers: { ...headers, 'content-encoding': 'br' }, body: asset.br };
  if (asset.gz !== null && /\bgzip\b/.test(accept)) return { status: 200, headers: { ...headers, 'content-encoding': 'gzip' }, body: asset.gz };
  return { status: 200, headers, body: asset.raw };
}

/** `{ name?, script, testCases: [{ rawString, assertions? }] }` from the parser editor. */
function tryInput(body: Buffer, maxDepth: number): { script: string; cases: ParserTestCase[]; name: string } {
  const b = parseJsonBounded(body.toString('utf8'), maxDepth, 'parser test') as Record<string, unknown> | null;
  if (typeof b !== 'object' || b === null || typeof b.script !== 'string' || !Array.isArray(b.testCases)) {
    throw new LogsvcError('E_VALIDATION', 'the body must be {"script": "...", "testCases": [{"rawString": "..."}]}');
  }
  const cases = b.testCases.map((c: unknown, i: number): ParserTestCase => {
    const o = c as Record<string, unknown> | null;
    if (typeof o !== 'object' || o === null || typeof o.rawString !== 'string') throw new LogsvcError('E_VALIDATION', `testCases[${i}].rawString: required, a string`);
    const asserts = Array.isArray(o.assertions) ? o.assertions : [];
    return {
      rawString: o.rawString,
      assertions: asserts.map((a: unknown, j: number) => {
        const x = a as Record<string, unknown> | null;
        const fields = x !== null && typeof x === 'object' && Array.isArray(x.fieldsHaveValues) ? x.fieldsHaveValues : null;
        if (fields === null || !fields.every((f: unknown) => typeof (f as Record<string, unknown>)?.fieldName === 'string' && typeof (f as Record<string, unknown>)?.expectedValue === 'string')) {
          throw new LogsvcError('E_VALIDATION', `testCases[${i}].assertions[${j}].fieldsHaveValues: a list of {fieldName, expectedValue} strings`);
        }
        return { outputEventIndex: typeof x!.outputEventIndex === 'number' ? x!.outputEventIndex : 0, fieldsHaveValues: fields as { fieldName: string; expectedValue: string }[], fieldsNotPresent: [] };
      }),
    };
  });
  return { script: b.script, cases, name: typeof b.name === 'string' && b.name !== '' ? b.name.slice(0, 100) : 'parser' };
}

/** What the UI asks beyond the public API: the query functions (completion) and parser trial runs. */
export function uiApiRoutes(s: HttpServices): Route[] {
  // Built at the first request, not at start: the collation (ICU) and the JSON stay out of an
  // idle node's memory (docs/benchmarks.md, "Idle RSS").
  let functions: string | null = null;
  return [
    {
      method: 'GET',
      pattern: '/api/v1/ui/query-functions',
      body: 'none',
      handle: () => {
        functions ??= JSON.stringify(functionSignatures().sort((a, b) => a.name.localeCompare(b.name)));
        return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=300' }, body: functions };
      },
    },
    {
      method: 'POST',
      pattern: '/api/v1/repositories/:repo/parsers/try',
      body: 'api',
      handle: (req, body) => {
        const p = apiPrincipal(s, req);
        const { script, cases, name } = tryInput(body, s.maxJsonDepth);
        return json(200, s.parsers.tryScript(p, req.params.repo!, name, script, cases));
      },
    },
  ];
}

export function uiRoutes(): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/',
      body: 'none',
      handle: (req) => {
        const page = load('index.html');
        if (page === null) throw new LogsvcError('E_UNAVAILABLE', 'the web UI is not built: run "npm run build" (dist/ui/index.html is missing)');
        return serve(page, req, 'no-cache');
      },
    },
    {
      method: 'GET',
      pattern: '/ui/assets/:name',
      body: 'none',
      handle: (req) => {
        const name = req.params.name!;
        const asset = NAME.test(name) && !name.endsWith('.gz') && !name.endsWith('.br') && name !== 'index.html' ? load(name) : null;
        if (asset === null) throw new LogsvcError('E_NOT_FOUND', `no UI asset named "${name.slice(0, 100)}"`);
        return serve(asset, req, 'public, max-age=31536000, immutable');
      },
    },
  ];
}
