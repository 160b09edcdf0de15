/**
 * The function reference: every registered function is documented and its example compiles; the
 * generated docs/query-functions.md is current; the functions of the product's reference
 * (query-functions.md §1) are built or listed as left out with a reason, at least 95% built, and
 * all 40 most-used functions of §3 are built.
 */
import { readFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { compileQuery } from '../../../src/query/compile.js';
import { renderFunctionReference } from '../../../src/query/functions/docs.js';
import { FUNCTION_DOCS, LEFT_OUT } from '../../../src/query/functions/reference.js';
import { allFunctions, lookupFunction } from '../../../src/query/functions/registry.js';
import { preambleOf, rowsToTable, runSubqueries } from '../../../src/query/subqueries.js';
import { MapEvent } from '../../../src/query/runtime.js';
import { ctxOf, run } from './driver.js';

const SPEC = readFileSync(new URL('../../../../shared/spec/query-functions.md', import.meta.url), 'utf8');

/** The names of §1's table (rows starting with a backquoted name). */
function specFunctions(): string[] {
  const s1 = SPEC.slice(SPEC.indexOf('## 1. Function table'), SPEC.indexOf('## 2. Syntax rules'));
  return [...s1.matchAll(/^\| `([A-Za-z0-9:]+)` \|/gm)].map((m) => m[1]!);
}

function top40(): string[] {
  const s3 = SPEC.slice(SPEC.indexOf('## 3. The 40 most-used'));
  return [...s3.matchAll(/^\| \d+ \| `([A-Za-z0-9:]+)` \|/gm)].map((m) => m[1]!);
}

t.test('the product reference: built or left out with a reason; >= 95% built; all 40 most used built', async (t) => {
  const names = specFunctions();
  t.equal(names.length, 196, 'query-functions.md §1 lists 196 functions');
  const built = names.filter((n) => lookupFunction(n) !== undefined);
  const missing = names.filter((n) => lookupFunction(n) === undefined);
  for (const n of missing) t.ok(Object.hasOwn(LEFT_OUT, n), `${n} is built or in LEFT_OUT`);
  for (const n of Object.keys(LEFT_OUT)) t.ok(names.includes(n) && lookupFunction(n) === undefined, `${n}: left out and in the reference`);
  t.ok(built.length / names.length >= 0.95, `${built.length} of ${names.length} built`);
  const most = top40();
  t.equal(most.length, 40);
  for (const n of most) t.ok(lookupFunction(n) !== undefined, `most used: ${n} is built`);
  for (const d of allFunctions()) t.equal(lookupFunction(d.name), d, `${d.name} resolves to itself`);
});

/** §1's rows: name and the parameters cell (escaped pipes `\\|` kept inside the cell). */
function specRows(): { name: string; params: string; row: string }[] {
  const s1 = SPEC.slice(SPEC.indexOf('## 1. Function table'), SPEC.indexOf('## 2. Syntax rules'));
  return [...s1.matchAll(/^\| `([A-Za-z0-9:]+)` \| (?:[^|]*) \| ((?:[^|\\]|\\.)*) \|.*$/gm)].map((m) => ({ name: m[1]!, params: m[2]!, row: m[0] }));
}

/** One parameter of a §1 cell: `name*:type (R)=default {a|b} ...`, split at `;` outside parentheses. */
function specParams(cell: string): { name: string; unnamed: boolean }[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of cell) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ';' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  return parts.flatMap((p) => {
    const m = /^\s*([A-Za-z][A-Za-z0-9_]*)(\*)?\s*(?::|\(|$)/.exec(p);
    return m === null ? [] : [{ name: m[1]!, unnamed: m[2] === '*' }];
  });
}

t.test('§1 parameters: every one is accepted under its name, the unnamed one as §1 marks it, and as= defaults to the documented output', async (t) => {
  let checked = 0;
  for (const { name, params, row } of specRows()) {
    const def = lookupFunction(name);
    if (def === undefined || /^\s*(unknown|\(none\)|\(no named params\))/.test(params)) continue;
    for (const sp of specParams(params)) {
      // correlate()'s query parameter is its named subqueries, `name: { ... }` (namedSubqueries).
      if (def.namedSubqueries === true && sp.name === 'query') continue;
      const ours = def.params.find((p) => p.name.toLowerCase() === sp.name.toLowerCase() || p.aliases?.some((x) => x.toLowerCase() === sp.name.toLowerCase()));
      t.ok(ours !== undefined, `${name}: parameter ${sp.name}`);
      // §1 marks at most one unnamed parameter; where it does, ours is that one (some functions also
      // take an unnamed argument §1 does not mark, e.g. getField("x"): a leniency, not a difference).
      if (sp.unnamed) t.equal(ours?.unnamed, true, `${name}: ${sp.name} is the unnamed parameter`);
      checked++;
    }
    const out = /\bas\*?:str=(_[A-Za-z0-9_]+)/.exec(params)?.[1];
    if (out !== undefined) {
      const as = def.params.find((p) => p.name === 'as')?.default;
      t.ok(as === out || def.valueAs === out, `${name}: output ${out} by default, as query-functions.md §1 says (${row.slice(0, 60)}...)`);
    }
  }
  t.ok(checked > 400, `${checked} parameters checked`);
});

function fixtureFiles(): { dataFiles: { geoip: string; asn: string; ioc: string }; files: Record<string, ReturnType<typeof rowsToTable>> } {
  const dir = mkdtempSync(join(tmpdir(), 'qf-ref-'));
  const geoip = join(dir, 'geo.csv');
  writeFileSync(geoip, 'network,country,city,lat,lon\n10.0.0.0/8,NO,Oslo,59.91,10.75\n');
  const asn = join(dir, 'asn.csv');
  writeFileSync(asn, 'network,asn,org\n10.0.0.0/8,64512,Example\n');
  const ioc = join(dir, 'ioc.csv');
  writeFileSync(ioc, 'indicator,type,malicious_confidence,labels,published_date,last_updated\n10.0.0.1,ip_address,high,bad,1,2\n');
  const users = rowsToTable([new MapEvent({ user: 'alice', dept: 'ops' })], null);
  return { dataFiles: { geoip, asn, ioc }, files: { 'users.csv': users } };
}

t.test('every function has a summary and an example, and every example compiles', async (t) => {
  const { dataFiles, files } = fixtureFiles();
  // Reverse DNS as a node configures it (its examples compile; nothing is looked up when compiling).
  const ctx = ctxOf({ dataFiles, rdns: { enabled: true, server: '', timeoutMs: 5000, concurrency: 10, perSecond: 100, maxLimit: 20_000, allowTargets: [] } });
  for (const d of allFunctions()) {
    const doc = FUNCTION_DOCS[d.name];
    if (doc === undefined) {
      t.fail(`${d.name}: no entry in reference.ts`);
      continue;
    }
    t.ok(doc.summary.length > 5, `${d.name}: summary`);
    t.ok(new RegExp(d.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i').test(doc.example), `${d.name}: the example uses it`);
    const args = { host: 'web1' };
    const pre = preambleOf(doc.example, args);
    const tables = await runSubqueries(pre, ctx, doc.example, args, 200_000, async (text, c) => ({ rows: run(text, [], { ctx: c }).rows.map((r) => new MapEvent(r)) }));
    if (d.parserOnly === true) continue;
    t.doesNotThrow(() => compileQuery(doc.example, { ctx, args, files: { ...files, ...tables } }), `${d.name}: ${doc.example}`);
  }
  for (const n of Object.keys(FUNCTION_DOCS)) t.ok(lookupFunction(n) !== undefined, `reference.ts entry ${n} is a function`);
});

t.test('docs/query-functions.md is what the definitions render (npm run docs:functions)', async (t) => {
  const file = readFileSync(new URL('../../../docs/query-functions.md', import.meta.url), 'utf8');
  t.ok(file === renderFunctionReference(), 'docs/query-functions.md is current; run npm run docs:functions');
});
