import t from 'tap';
import { normalizeUnstructured } from '../../../src/ingest/unstructured.js';
import { prepareRecord } from '../../../src/ingest/pipeline.js';
import { MAX_RECORD_BYTES } from '../../../src/queue/index.js';

const limits = { maxEventsPerRequest: 1_000_000, maxEventBytes: 1024 * 1024, maxFieldsPerEvent: 1000, maxJsonDepth: 64 };

t.test('an unstructured item whose fields would be copied into a huge record is refused before it is built', async (t) => {
  // ~800 KB of body, but 200,000 messages x 1,400 characters of fields: about 280 MB of events.
  const body = [{ fields: { f: 'x'.repeat(1400) }, messages: Array.from({ length: 200_000 }, () => 'a') }];
  t.throws(() => normalizeUnstructured(body, 0, limits, null), { code: 'E_BODY_TOO_LARGE', httpStatus: 413, message: /\[0\]: 200000 messages times 1401 characters of fields/ });
  // The same with few messages is fine.
  const small = [{ fields: { f: 'x'.repeat(1400) }, messages: ['a', 'b'] }];
  t.equal(normalizeUnstructured(small, 0, limits, null)[0]!.events.length, 2);
});

t.test('a record larger than the queue accepts is refused with 413 when it is encoded', async (t) => {
  const raw = 'y'.repeat(1024 * 1024);
  const events = Array.from({ length: Math.ceil(MAX_RECORD_BYTES / raw.length) + 1 }, () => ({ timestamp: 0, timezone: 'Z', rawstring: raw, fields: {} }));
  t.throws(() => prepareRecord('repo', [{ tags: { host: 'h' }, events }], 0), { code: 'E_BODY_TOO_LARGE', message: /more than one request may hold/ });
});
