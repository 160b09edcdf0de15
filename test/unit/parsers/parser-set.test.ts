import t from 'tap';
import { encodeParserSet, parserDefAt, type CustomParserDef } from '../../../src/parsers/index.js';
import { CustomParsers } from '../../../src/ingest/custom-parsing.js';
import { runIngestTask } from '../../../src/ingest/pipeline.js';

const limits = { maxEventsPerRequest: 1000, maxEventBytes: 1 << 20, maxFieldsPerEvent: 100, maxJsonDepth: 64 };
const def = (name: string, script: string): CustomParserDef => ({ id: `id-${name}`, name, script, fieldsToTag: [], fieldsToBeRemovedBeforeParsing: [], savedAt: 1 });

t.test('a parser set holds every definition in one shared buffer and gives each back', async (t) => {
  const defs = [def('a', 'x := "a"'), def('ü-b', `y := "${'ü'.repeat(1000)}"`), def('c', 'kvParse()')];
  const set = encodeParserSet(defs);
  t.ok(set.sab instanceof SharedArrayBuffer);
  t.strictSame(set.names, ['a', 'ü-b', 'c']);
  t.equal(new Set(set.keys).size, 3);
  for (let i = 0; i < defs.length; i++) t.strictSame(parserDefAt(set, i), defs[i]);
  t.strictSame(encodeParserSet([]).names, []);
});

t.test('ingest reads from the set only the parsers the items name', async (t) => {
  const set = encodeParserSet([def('one', 'x := "1"'), def('two', 'x := "2"')]);
  const custom = new CustomParsers(set, { maxRequestMs: 10_000 }, limits);
  t.equal(custom.get('nope'), undefined, 'not a custom parser: built-ins apply');
  t.equal(custom.get('two')!.parse({ rawstring: 'l', input: {}, tags: {}, after: {}, timestamp: null, timezone: null }, 1, limits, custom.budget)[0]!.event.fields.x, '2');
  const body = new TextEncoder().encode(JSON.stringify([{ type: 'one', messages: ['a'] }, { type: 'two', messages: ['b', 'c'] }, { messages: ['k=v'] }]));
  const r = runIngestTask({ kind: 'unstructured', body, contentEncoding: undefined, maxDecompressedBytes: 1 << 20, limits, parser: null, repositoryId: 'r', at: 1, customParsers: set });
  t.match(r, { ok: true, events: 4 });
});
