import t from 'tap';
import { CustomParser, ParserBudget, compiledParser, type CustomParserDef } from '../../../src/parsers/index.js';
import { parserKey } from '../../../src/parsers/custom-parser.js';
import { runIngestTask } from '../../../src/ingest/pipeline.js';
import { GlobalState } from '../../../src/global/index.js';

const limits = { maxEventsPerRequest: 1000, maxEventBytes: 1 << 20, maxFieldsPerEvent: 100, maxJsonDepth: 64 };
const def = (script: string, extra: Partial<CustomParserDef> = {}): CustomParserDef => ({ id: 'p1', name: 'p', script, fieldsToTag: [], fieldsToBeRemovedBeforeParsing: [], savedAt: 1, ...extra });
const budget = (maxRequestMs = 10_000) => new ParserBudget({ maxRequestMs });
const msg = (rawstring: string, more: Partial<Parameters<CustomParser['parse']>[0]> = {}) => ({ rawstring, input: {}, tags: {}, after: {}, timestamp: null, timezone: null, ...more });

t.test('fields, tags, timestamp, removal before parsing, fields after', async (t) => {
  const p = new CustomParser(def('kvParse() | parseTimestamp("yyyy-MM-dd\'T\'HH:mm:ssXXX", field=ts) | #env := "prod"', { fieldsToTag: ['svc'], fieldsToBeRemovedBeforeParsing: ['secret'] }));
  const [out, ...rest] = p.parse(msg('ts=2026-11-21T00:00:00Z svc=api a=1', { input: { secret: 's', keep: 'k' }, tags: { host: 'h' }, after: { extra: 'e' } }), 5, limits, budget());
  t.equal(rest.length, 0);
  t.strictSame(out!.tags, { host: 'h', type: 'p', svc: 'api', env: 'prod' });
  t.equal(out!.event.timestamp, Date.parse('2026-11-21T00:00:00Z'));
  t.equal(out!.event.fields.a, '1');
  t.equal(out!.event.fields.keep, 'k');
  t.equal(out!.event.fields.extra, 'e');
  t.equal(out!.event.fields.secret, undefined);
  t.equal(out!.event.fields.svc, undefined, 'a tagged field is a tag, not a field');
});

t.test('dropping, splitting, and the ingest time fallback', async (t) => {
  const p = new CustomParser(def('/keep/ | kvParse()'));
  t.strictSame(p.parse(msg('drop me'), 5, limits, budget()), [], 'a filter drops the event');
  const [kept] = p.parse(msg('keep x=1'), 77, limits, budget());
  t.equal(kept!.event.timestamp, 77);
});

t.test('errors mark the event and keep it', async (t) => {
  const p = new CustomParser(def('@timestamp := "soon"'));
  const [e] = p.parse(msg('line'), 5, limits, budget());
  t.equal(e!.event.fields['@error'], 'true');
  t.match(e!.event.fields['@error_msg'], /@timestamp "soon" is not epoch milliseconds/);
  t.equal(e!.event.rawstring, 'line');
  const slow = new CustomParser(def('kvParse()'));
  const b = budget(0);
  const [first] = slow.parse(msg('a=1'), 5, limits, b);
  t.equal(first!.event.fields.a, '1', 'the event that uses up the budget keeps its output');
  t.equal(first!.event.fields['@error'], undefined);
  const [later] = slow.parse(msg('a=2'), 5, limits, b);
  t.match(later!.event.fields['@error_msg'], /parsers\.max_request_ms/, 'later events of a request past its budget are stored unparsed');
  const tagBad = new CustomParser(def(`x := "${'v'.repeat(1100)}"`, { fieldsToTag: ['x'] }));
  const [tb] = tagBad.parse(msg('l'), 5, limits, budget());
  t.match(tb!.event.fields['@error_msg'], /tag x is longer than 1024/, 'a bad tag marks the event instead of failing ingest');
  t.strictSame(tb!.tags, { type: 'p' });
});

t.test('aggregates are refused when compiling', async (t) => {
  t.throws(() => new CustomParser(def('groupBy(a)')), /cannot be used in a parser/);
  t.throws(() => new CustomParser(def('match(file="x.csv", field=a)')), /not available in parsers/);
});

t.test('global state: files and parsers survive a snapshot; a deleted repository takes them along', async (t) => {
  const g = new GlobalState();
  g.apply({ type: 'RepositoryCreated', id: 'r1', name: 'r', description: '', at: 1 }, 1);
  g.apply({ type: 'FileStored', scope: 'r1', name: 'a.csv', contentHash: 'h1', size: 3, rows: 1, at: 2 }, 2);
  g.apply({ type: 'FileStored', scope: '', name: 's.csv', contentHash: 'h2', size: 3, rows: 1, at: 2 }, 3);
  g.apply({ type: 'ParserSaved', repositoryId: 'r1', id: 'p1', name: 'p', script: 'kvParse()', testCases: [], fieldsToTag: [], fieldsToBeRemovedBeforeParsing: [], at: 4 }, 4);
  const copy = GlobalState.fromSnapshot(structuredClone(g.toSnapshot()));
  t.equal(copy.files.get('r1', 'a.csv')?.contentHash, 'h1');
  t.equal(copy.files.get('', 's.csv')?.contentHash, 'h2');
  t.equal(copy.parsers.byName('r1', 'p')?.script, 'kvParse()');
  copy.apply({ type: 'RepositoryDeleted', id: 'r1' }, 5);
  t.equal(copy.files.get('r1', 'a.csv'), undefined);
  t.equal(copy.parsers.byName('r1', 'p'), undefined);
  t.ok(copy.files.referenced('h2'));
  t.notOk(copy.files.referenced('h1'));
  const old = g.toSnapshot();
  delete old.files;
  delete old.parsers;
  t.equal(GlobalState.fromSnapshot(old).files.all().length, 0, 'snapshots from before files load');
});

t.test('compiled copies are keyed by what they are compiled from, not the save time', async (t) => {
  const a = compiledParser(def('x := "one"', { id: 'same', savedAt: 42 }));
  const b = compiledParser(def('x := "two"', { id: 'same', savedAt: 42 }));
  t.not(a, b, 'two saves in the same millisecond are two parsers');
  t.equal(b.parse(msg('l'), 5, limits, budget())[0]!.event.fields.x, 'two');
  const tagged = compiledParser(def('x := "two"', { id: 'same', savedAt: 42, fieldsToTag: ['x'] }));
  t.strictSame(tagged.parse(msg('l'), 5, limits, budget())[0]!.tags, { type: 'p', x: 'two' }, 'fieldsToTag is part of the key');
  t.equal(compiledParser(def('x := "two"', { id: 'same', savedAt: 99 })), b, 'the same parser saved again is reused');
  t.equal(parserKey(def('s')), parserKey(def('s')));
});

// Review 5 findings 4 and 13: a real (positive) request budget, and no output dropped for wall time.
t.test('a request budget in milliseconds: whole events before it is spent, marked ones after, nothing dropped', async (t) => {
  const p = new CustomParser(def('kvParse() | regex("k(?<n>\\d+)=", repeat=true, limit=50)'));
  const line = Array.from({ length: 50 }, (_, i) => `k${i}=v${i}`).join(' ');
  const b = budget(30);
  const outs: ReturnType<CustomParser['parse']>[] = [];
  const t0 = performance.now();
  while (!b.exhausted && performance.now() - t0 < 20_000) outs.push(p.parse(msg(line), 5, limits, b));
  t.ok(b.exhausted, `the budget ran out after ${outs.length} events`);
  t.ok(b.usedMs > 30);
  for (const out of outs) {
    // Every run that completed keeps all of its output, however long it took.
    t.equal(out.length, 50);
    if (out.some((e) => e.event.fields['@error'] !== undefined || e.event.fields.k0 !== 'v0')) {
      t.fail('a completed run lost its output');
      return;
    }
  }
  const [after, ...none] = p.parse(msg(line), 5, limits, b);
  t.equal(none.length, 0);
  t.match(after!.event.fields['@error_msg'], /max_request_ms = 30/);
  t.equal(after!.event.rawstring, line, 'kept as it came in');
});

t.test('now() reads the clock for each event', async (t) => {
  const p = new CustomParser(def('t := now()'));
  const first = Number(p.parse(msg('x'), 5, limits, budget())[0]!.event.fields.t);
  await new Promise((r) => setTimeout(r, 30));
  const second = Number(p.parse(msg('x'), 5, limits, budget())[0]!.event.fields.t);
  t.ok(second - first >= 25, `the second event's now() is later (${second - first} ms)`);
  t.ok(Math.abs(Date.now() - second) < 1000);
});

t.test('a stored parser that does not compile here marks its events instead of failing the request', async (t) => {
  const broken = compiledParser(def('regex("(")', { id: 'broken', fieldsToBeRemovedBeforeParsing: ['secret'] }));
  const [e, ...rest] = broken.parse(msg('line', { input: { a: '1', secret: 's' }, tags: { host: 'h' }, after: { f: 'x' } }), 5, limits, budget());
  t.equal(rest.length, 0);
  t.equal(e!.event.rawstring, 'line');
  t.equal(e!.event.fields['@error'], 'true');
  t.match(e!.event.fields['@error_msg'], /parser p does not compile: /);
  t.equal(e!.event.fields.a, '1');
  t.equal(e!.event.fields.f, 'x');
  t.equal(e!.event.fields.secret, undefined);
  t.strictSame(e!.tags, { host: 'h', type: 'p' });
  const body = new TextEncoder().encode(JSON.stringify([{ messages: ['one', 'two'] }]));
  const r = runIngestTask({ kind: 'unstructured', body, contentEncoding: undefined, maxDecompressedBytes: 1 << 20, limits, parser: 'p', repositoryId: 'r', at: 1, customParsers: [def('regex("(")', { id: 'broken' })] });
  t.match(r, { ok: true, events: 2 }, 'the request is stored, both events marked');
});
