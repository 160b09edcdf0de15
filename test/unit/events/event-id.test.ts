import t from 'tap';
import { eventId, parseEventId } from '../../../src/events/index.js';

const SHAPE = /^[0-9a-f]{24}_\d+_0_\d+$/;

t.test('eventId has the product shape and exact digits', async (t) => {
  t.equal(eventId(0, 0, 0, 0), '000000000000000000000000_0_0_0');
  t.equal(eventId(3, 0x1f4, 7, 1_700_000_000_999), '0003000000000000000001f4_7_0_1700000000');
  t.equal(eventId(0xffff, 2 ** 53 - 1, 4_294_967_295, 999), 'ffff00000001fffffffffffff_4294967295_0_0'.replace('ffff00000001fffffffffffff', 'ffff' + (2 ** 53 - 1).toString(16).padStart(20, '0')));
  t.match(eventId(12, 123_456_789, 3, Date.UTC(2024, 0, 1)), SHAPE);
  t.equal(eventId(1, 2, 3, 1999).split('_')[3], '1', 'seconds are floored');
  t.equal(eventId(1, 2, 3, 2000).split('_')[3], '2');
});

t.test('eventId/parseEventId round trip', async (t) => {
  const cases: [number, number, number, number][] = [
    [0, 0, 0, 0],
    [1, 16, 0, 1000],
    [23, 4104, 5, 1_700_000_000_000],
    [255, 2 ** 40 + 17, 1234, Date.UTC(2030, 5, 6, 7, 8, 9)],
    [0xffff, 2 ** 53 - 1, 2 ** 31, 1],
  ];
  for (const [p, o, i, ts] of cases) {
    const id = eventId(p, o, i, ts);
    t.match(id, SHAPE, id);
    t.strictSame(parseEventId(id), { partition: p, offset: o, index: i }, `round trip ${id}`);
  }
  for (let n = 0; n < 500; n++) {
    const p = Math.floor(Math.random() * 0x10000);
    const o = Math.floor(Math.random() * 2 ** 48);
    const i = Math.floor(Math.random() * 100_000);
    const id = eventId(p, o, i, 1_600_000_000_000 + n * 1234);
    const back = parseEventId(id);
    if (back === null || back.partition !== p || back.offset !== o || back.index !== i || !SHAPE.test(id)) {
      t.fail(`round trip failed for ${p},${o},${i}: ${id} -> ${JSON.stringify(back)}`);
      return;
    }
  }
  t.pass('500 random positions round trip');
});

t.test('distinct positions give distinct ids', async (t) => {
  const ids = new Set<string>();
  for (let p = 0; p < 4; p++) for (let o = 0; o < 50; o++) for (let i = 0; i < 5; i++) ids.add(eventId(p, o * 100, i, 1000));
  t.equal(ids.size, 4 * 50 * 5);
});

t.test('parseEventId rejects malformed ids', async (t) => {
  t.equal(parseEventId(''), null);
  t.equal(parseEventId('00000000000000000000000_0_0_0'), null, '23 hex digits');
  t.equal(parseEventId('0000000000000000000000000_0_0_0'), null, '25 hex digits');
  t.equal(parseEventId('00000000000000000000000G_0_0_0'), null, 'non-hex digit');
  t.equal(parseEventId('00000000000000000000000A_0_0_0'), null, 'upper-case hex');
  t.equal(parseEventId('000000000000000000000000_0_1_0'), null, 'third part must be 0');
  t.equal(parseEventId('000000000000000000000000_x_0_0'), null, 'index not a number');
  t.equal(parseEventId('000000000000000000000000_0_0'), null, 'missing seconds');
  t.equal(parseEventId('000000000000000000000000_0_0_0 '), null, 'trailing space');
  t.strictSame(parseEventId('000a00000000000000000010_2_0_-5'), { partition: 10, offset: 16, index: 2 }, 'negative seconds (pre-1970 event) parse');
});
