import t from 'tap';
import { datasourceId } from '../../../src/events/index.js';
import { encodeDatasourceIds, fitDatasources } from '../../../src/ingest/datasource-room.js';
import { runIngestTask } from '../../../src/ingest/pipeline.js';
import type { CustomParserDef } from '../../../src/parsers/index.js';

const limits = { maxEventsPerRequest: 1000, maxEventBytes: 1 << 20, maxFieldsPerEvent: 100, maxJsonDepth: 64 };
const svc: CustomParserDef = { id: 's', name: 'svc', script: 'kvParse()', fieldsToTag: ['svc'], fieldsToBeRemovedBeforeParsing: [], savedAt: 1 };

function run(messages: string[], existing: Record<string, string>[], room: number) {
  const body = new TextEncoder().encode(JSON.stringify([{ messages, tags: { host: 'h' } }]));
  const datasourceRoom = { limit: 9, room, existing: encodeDatasourceIds(existing.map((tags) => datasourceId('r', tags))) };
  const r = runIngestTask({ kind: 'unstructured', body, contentEncoding: undefined, maxDecompressedBytes: 1 << 20, limits, parser: 'svc', repositoryId: 'r', at: 1, customParsers: [svc], datasourceRoom });
  if (!r.ok) throw new Error(r.message);
  return r.summary.groups.map((g) => ({ tags: g.tags, events: g.n })).sort((a, b) => JSON.stringify(a.tags).localeCompare(JSON.stringify(b.tags)));
}

t.test('parser tag sets beyond the room fall back to the sender tags, marked; existing ones always fit', async (t) => {
  const label = (gs: { tags: Record<string, string>; events: number }[]) => gs.map((g) => `${g.tags.svc ?? '-'}:${g.events}`).sort();
  const c = { host: 'h', type: 'svc', svc: 'c' };
  t.strictSame(label(run(['svc=a', 'svc=b', 'svc=c', 'svc=a'], [c], 2)), ['a:2', 'b:1', 'c:1'], 'a and b take the two free datasources, c exists');
  t.strictSame(label(run(['svc=a', 'svc=b', 'svc=c', 'svc=a'], [c], 2 - 1)), ['-:3', 'c:1'], 'no room for both: the one free datasource goes to the fallback {host, type}');
  t.strictSame(label(run(['svc=a', 'svc=b', 'svc=c'], [c, { host: 'h', type: 'svc' }], 1)), ['-:1', 'a:1', 'c:1'], 'an existing fallback needs no room: a takes it, b falls back');
  t.equal(run(['svc=a', 'svc=b'], [], 10).length, 2, 'with room every tag set is kept');
});

t.test('fitDatasources marks the events it moves', async (t) => {
  const ev = () => ({ timestamp: 1, timezone: 'Z', rawstring: 'x', fields: {} as Record<string, string> });
  const group = { tags: { type: 'p', k: 'v' }, events: [ev()], fallbackTags: [{ type: 'p' }] };
  const [moved] = fitDatasources([group], 'r', { limit: 5, room: 0, existing: encodeDatasourceIds([]) });
  t.strictSame(moved!.tags, { type: 'p' });
  t.equal(moved!.events[0]!.fields['@error'], 'true');
  t.match(moved!.events[0]!.fields['@error_msg'], /limit of 5 datasources \(ingest\.max_datasources_per_repository\)/);
});
