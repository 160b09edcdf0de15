/**
 * Blocks from record sections: the column path (appendColumns over sections, or the native builder
 * straight from version 3 sections) must build exactly the block that appending event by event
 * builds, from every record version, with replayed events skipped.
 */
import t from 'tap';
import { buildBlock, type BlockPart } from '../../../src/digest/block-parts.js';
import { encodeRecord, groupSection, type IngestEvent } from '../../../src/events/index.js';
import { appendEvent, decodeBlockEvents, emptyColumns, encodeBlock, readBlockMeta } from '../../../src/segments/block.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { rnd } from '../../helpers/random.js';

function events(seed: number, n: number): IngestEvent[] {
  const r = rnd(seed);
  const out: IngestEvent[] = [];
  for (let i = 0; i < n; i++) {
    const fields: Record<string, string> = {};
    // Fields that come and go, and a new one late in the group.
    if (r() < 0.8) fields.method = r() < 0.5 ? 'GET' : 'POST';
    if (r() < 0.5) fields.status = String(200 + Math.floor(r() * 5));
    if (i > n / 2 && r() < 0.5) fields[`late${seed}`] = `v${i}`;
    if (r() < 0.1) Object.defineProperty(fields, '__proto__', { value: 'p', enumerable: true, writable: true, configurable: true });
    out.push({ timestamp: 1_700_000_000_000 + i, timezone: i % 3 === 0 ? '+02:00' : 'Z', rawstring: `${fields.method ?? '-'} /p/${i} ${fields.status ?? ''}`, fields });
  }
  return out;
}

function section(evs: IngestEvent[], version: 1 | 2 | 3): Uint8Array {
  if (version === 1) return Buffer.from(JSON.stringify(evs.map((e) => [e.timestamp, e.timezone, e.rawstring, e.fields])));
  if (version === 2) {
    const names = [...new Set(evs.flatMap((e) => Object.keys(e.fields)))];
    const cols = names.map((k) => evs.map((e) => (Object.hasOwn(e.fields, k) ? e.fields[k]! : null)));
    return Buffer.from(JSON.stringify({ n: evs.length, ts: evs.map((e) => e.timestamp), tz: evs.map((e) => e.timezone), raw: evs.map((e) => e.rawstring), names, cols }));
  }
  const { payload, summary } = encodeRecord({ repo: 'r', at: 1, groups: [{ ds: 'd', tags: {}, events: evs }] });
  return new Uint8Array(groupSection(payload, summary, 0));
}

t.test('column path = event path, from every record version, with skipped events', async (t) => {
  const groups = [events(1, 40), events(2, 25), events(3, 60)];
  const skips = [3, 0, 10];
  const at = [111, 222, 333];
  // The reference: event by event, as the digest appended before columns.
  const c = emptyColumns();
  groups.forEach((g, k) => {
    for (let i = skips[k]!; i < g.length; i++) appendEvent(c, g[i]!.timestamp, g[i]!.timezone, g[i]!.rawstring, g[i]!.fields, at[k]!, k * 1000, 5 + i);
  });
  const expected = encodeBlock(c, lz4Codec);
  for (const version of [1, 2, 3] as const) {
    const parts: BlockPart[] = groups.map((g, k) => ({ events: section(g, version), offset: k * 1000, base: 5, skip: skips[k]!, at: at[k]! }));
    const built = buildBlock(parts);
    t.ok(built.equals(expected), `version ${version} sections build the same bytes`);
  }
  const stored = decodeBlockEvents(expected, 0, readBlockMeta(expected, 0)!, lz4Codec);
  t.equal(stored.length, 40 - 3 + 25 + 60 - 10);
  t.strictSame(stored[0], { ...stored[0], offset: 0, index: 8, ingestTimestamp: 111 }, 'the first kept event of a part keeps its queue position');
  t.equal(Object.getOwnPropertyDescriptor(stored.find((e) => Object.hasOwn(e.fields, '__proto__'))?.fields ?? {}, '__proto__')?.value, 'p', 'a "__proto__" field stays a field');
});

t.test('a part whose every event is skipped adds nothing', async (t) => {
  const g = events(4, 5);
  const c = emptyColumns();
  for (let i = 0; i < g.length; i++) appendEvent(c, g[i]!.timestamp, g[i]!.timezone, g[i]!.rawstring, g[i]!.fields, 1, 0, i);
  const built = buildBlock([
    { events: section(events(5, 7), 3), offset: 0, base: 0, skip: 7, at: 1 },
    { events: section(g, 3), offset: 0, base: 0, skip: 0, at: 1 },
  ]);
  t.ok(built.equals(encodeBlock(c, lz4Codec)));
});
