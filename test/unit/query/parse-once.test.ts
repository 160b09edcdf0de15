/**
 * One parse per request (QueryService.prepare): the preamble, the file references and the
 * executor's compile all read the same syntax tree, and a query job's refreshes compile that tree
 * again. That is only sound if nothing changes the tree: here every function's example is compiled
 * twice from one deep-frozen tree (a write to it throws in strict mode), both compiled queries run,
 * and the answers, the preamble and the file names are the ones the text alone gives.
 */
import t from 'tap';
import { compileQuery, keepParsed, keptParsed } from '../../../src/query/compile.js';
import { callsOf, fileNamesIn, fileNamesInTree } from '../../../src/query/file-refs.js';
import { FUNCTION_DOCS } from '../../../src/query/functions/reference.js';
import { allFunctions } from '../../../src/query/functions/registry.js';
import { PARSED_TEXTS, parsedQuery, substituteParams } from '../../../src/query/params.js';
import { parseQuery } from '../../../src/query/parser.js';
import { MapEvent } from '../../../src/query/runtime.js';
import { preambleOf, rowsToTable } from '../../../src/query/subqueries.js';
import { NOW, ctxOf, run, runCompiled, type Fields } from './driver.js';

/** Every call's name and span in the tree, by a plain walk of every value (the reference for callsOf). */
function callsByWalk(v: unknown, out: string[] = []): string[] {
  if (typeof v !== 'object' || v === null) return out;
  if (Array.isArray(v)) {
    for (const x of v) callsByWalk(x, out);
    return out;
  }
  const o = v as { name?: unknown; args?: unknown; span?: { start: number } };
  if (typeof o.name === 'string' && Array.isArray(o.args) && typeof o.span === 'object') out.push(`${o.name}@${o.span.start}`);
  for (const x of Object.values(v)) callsByWalk(x, out);
  return out;
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

const EVENTS: Fields[] = Array.from({ length: 12 }, (_, i) => ({
  '@timestamp': String(NOW - i * 60_000),
  '@rawstring': `host=web${i % 3} status=${200 + (i % 4) * 100} user=u${i % 5} ip=10.0.0.${i} took ${i * 7} ms`,
  host: `web${i % 3}`,
  status: String(200 + (i % 4) * 100),
  user: `u${i % 5}`,
  ip: `10.0.0.${i}`,
  took: String(i * 7),
  method: i % 2 === 0 ? 'GET' : 'POST',
}));

t.test('every function example compiles and runs twice from one frozen tree, as from its text', async (t) => {
  const ctx = ctxOf();
  const files = { 'users.csv': rowsToTable([new MapEvent({ user: 'alice', dept: 'ops' })], null) };
  let compared = 0;
  for (const d of allFunctions()) {
    const doc = FUNCTION_DOCS[d.name];
    if (doc === undefined || d.parserOnly === true) continue;
    const text = doc.example;
    const args = { host: 'web1' };
    const tree = deepFreeze(parsedQuery(text, args));
    t.strictSame(preambleOf(text, args, tree), preambleOf(text, args), `${d.name}: preamble`);
    t.strictSame(fileNamesInTree(tree), fileNamesIn(text, args), `${d.name}: file names`);
    t.strictSame(callsOf(tree).map((c) => `${c.name}@${c.span.start}`), callsByWalk(tree), `${d.name}: calls`);
    let plain;
    try {
      plain = run(text, EVENTS, { ctx, args, files });
    } catch {
      // Needs tables or data files this test does not give; compiling from the tree must fail alike.
      t.throws(() => runCompiled(compileQuery(text, { ctx, args, files, parsed: tree }), EVENTS), `${d.name}: fails alike`);
      continue;
    }
    for (const round of [1, 2]) {
      const q = compileQuery(text, { ctx, args, files, parsed: tree });
      t.strictSame(runCompiled(q, EVENTS).rows, plain.rows, `${d.name}: round ${round}: ${text}`);
    }
    compared++;
  }
  t.ok(compared > 100, `${compared} examples compared`);
});

t.test('file names: literal names of match, lookup, readFile and cidr(file=), in the order the tree has them', async (t) => {
  const text = 'match(file="a.csv", field=x) | lookup("b.csv", field=y) | cidr(ip, file=c.csv) | case { z=1 | readFile(["d.csv", "e.csv"]); * | match(table=t1, field=x) } | match(file="a.csv", field=w)';
  t.strictSame(fileNamesInTree(parsedQuery(text, {})), ['a.csv', 'b.csv', 'c.csv', 'd.csv', 'e.csv', 't1']);
  t.strictSame(fileNamesIn('match(file=?f, field=x)', { f: 'p.csv' }), ['p.csv'], 'a parameter substituted');
  t.strictSame(fileNamesIn('match(file='), [], 'a query that does not parse names none');
});

t.test('a kept tree is used only while the spec still has the text and arguments it was parsed from', async (t) => {
  const args = {};
  const spec = { text: 'count()', args };
  const tree = parsedQuery(spec.text, args);
  keepParsed(spec, tree);
  t.equal(keptParsed(spec), tree);
  t.equal(keptParsed({ ...spec }), undefined, 'a copy is another spec');
  spec.text = 'groupBy(host)';
  t.equal(keptParsed(spec), undefined, 'other text');
  spec.text = 'count()';
  t.equal(keptParsed(spec), tree);
  (spec as { args: Record<string, string> }).args = { x: '1' };
  t.equal(keptParsed(spec), undefined, 'other arguments');
});

t.test('texts without arguments: one frozen tree per text, kept across requests, as a fresh parse gives', async (t) => {
  const fail = (): never => {
    throw new Error('parameter without a value');
  };
  let kept = 0;
  for (const d of allFunctions()) {
    const text = FUNCTION_DOCS[d.name]?.example;
    if (text === undefined) continue;
    let fresh;
    try {
      fresh = substituteParams(parseQuery(text), {}, fail);
    } catch {
      t.throws(() => parsedQuery(text, {}), `${d.name}: refused as before`);
      continue;
    }
    const first = parsedQuery(text, {});
    t.strictSame(first, fresh, `${d.name}: the tree a fresh parse gives`);
    t.equal(parsedQuery(text, {}), first, `${d.name}: asked again, the same tree`);
    t.ok(Object.isFrozen(first) && Object.isFrozen(first.stages), `${d.name}: frozen`);
    kept++;
  }
  t.ok(kept > 100, `${kept} texts`);
  const withArgs = parsedQuery('count() | x := ?v', { v: '1' });
  t.not(parsedQuery('count() | x := ?v', { v: '1' }), withArgs, 'a text with arguments is parsed each time');
  t.throws(() => parsedQuery('count(', {}));
  t.throws(() => parsedQuery('count(', {}), 'a text that does not parse is refused each time');
  const firstText = 'count() | n0 := 0';
  const tree = parsedQuery(firstText, {});
  for (let i = 1; i <= PARSED_TEXTS; i++) parsedQuery(`count() | n${i} := ${i}`, {});
  const again = parsedQuery(firstText, {});
  t.not(again, tree, 'the oldest text is out once PARSED_TEXTS others came after it');
  t.strictSame(again, tree);
});
