// Kept in its own file: a regression here may write onto Object.prototype (it did in an earlier
// version of addEvent), which would leak into every other test of the same process. Results are
// copied out as plain data and any such writes undone before asserting.
import t from 'tap';
import { addEvent, decodeBlockEvents, emptyColumns, encodeBlock, readBlockMeta } from '../../../src/segments/block.js';
import { lz4Codec } from '../../../src/segments/codec.js';

const NAMES = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'];

function cleanPrototypes(): void {
  for (const target of [Object.prototype, Object, Object.prototype.toString, Object.prototype.valueOf, Object.prototype.hasOwnProperty] as Record<string, unknown>[]) {
    for (const k of Object.keys(target)) if (/^\d+$/.test(k)) delete target[k];
  }
}
t.teardown(cleanPrototypes);

const own = (o: Record<string, string>, k: string): string | null => (Object.getOwnPropertyDescriptor(o, k)?.value as string | undefined) ?? null;

/** Encodes and decodes events with these fields; returns plain data (JSON) or the error thrown. */
function roundTrip(fields: Record<string, string>[], names: string[]): { error: string | null; values: string; keys: string; polluted: string } {
  let error: string | null = null;
  let values = 'null';
  let keys = 'null';
  try {
    const c = emptyColumns();
    fields.forEach((f, i) => addEvent(c, { timestamp: 1000 + i, timezone: 'Z', rawstring: `e${i}`, fields: f, ingestTimestamp: 0, offset: 0, index: i }));
    const b = encodeBlock(c, lz4Codec);
    const out = decodeBlockEvents(b, 0, readBlockMeta(b, 0)!, lz4Codec);
    values = JSON.stringify(names.map((n) => out.map((e) => own(e.fields, n))));
    keys = JSON.stringify(out.map((e) => Object.getOwnPropertyNames(e.fields).sort()));
  } catch (err) {
    error = `${(err as Error).name}: ${(err as Error).message}`;
  }
  const polluted = JSON.stringify(Object.keys(Object.prototype));
  cleanPrototypes();
  return { error, values, keys, polluted };
}

t.test('fields named like Object.prototype members round-trip through a block', async (t) => {
  // Ingest keeps such names as ordinary fields (flatten.ts and field-sink.ts take care to keep even
  // "__proto__" as an own key), so a block must store them like any other field.
  for (const name of NAMES.filter((n) => n !== '__proto__')) {
    const r = roundTrip([{ [name]: 'v0', other: 'o0' }, { other: 'o1' }, { [name]: 'v2' }], [name, 'other']);
    t.equal(r.error, null, `field "${name}": encodes without error`);
    t.equal(r.values, JSON.stringify([['v0', null, 'v2'], ['o0', 'o1', null]]), `field "${name}" kept beside "other"`);
    t.equal(r.polluted, '[]', `field "${name}": Object.prototype untouched`);
  }
});

t.test('a field named "__proto__" round-trips and does not touch Object.prototype', async (t) => {
  const fields = JSON.parse('{"__proto__":"p0","x":"1"}') as Record<string, string>;
  t.ok(Object.hasOwn(fields, '__proto__'), 'precondition: an own "__proto__" field, as ingest produces');
  const r = roundTrip([fields, { x: '2' }], ['__proto__', 'x']);
  t.equal(r.error, null, 'encodes without error');
  t.equal(r.polluted, '[]', 'Object.prototype has no enumerable keys afterwards');
  t.equal(r.keys, JSON.stringify([['__proto__', 'x'], ['x']]), 'exactly the fields that went in');
  t.equal(r.values, JSON.stringify([['p0', null], ['1', '2']]));
});
