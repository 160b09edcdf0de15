import t from 'tap';
import { CustomParsers } from '../../../src/ingest/custom-parsing.js';
import { normalizeRaw, normalizeStructured, normalizeUnstructured } from '../../../src/ingest/index.js';
import { runIngestTask } from '../../../src/ingest/pipeline.js';
import { LogsvcError } from '../../../src/lib/errors.js';
import type { CustomParserDef } from '../../../src/parsers/index.js';

const limits = { maxEventsPerRequest: 50, maxEventBytes: 1 << 20, maxFieldsPerEvent: 100, maxJsonDepth: 64 };
const times = { maxRequestMs: 10_000 };
/** Ten events per input: one per character of a ten-character message. */
const chars: CustomParserDef = { id: 'c', name: 'chars', script: 'regex("(?<c>\\\\w)", repeat=true)', fieldsToTag: [], fieldsToBeRemovedBeforeParsing: [], savedAt: 1 };
const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return err instanceof LogsvcError ? `${err.code}: ${err.message}` : String(err);
  }
  return 'accepted';
};

t.test('parser output counts against the request event limit and stops at the first event past it', async (t) => {
  const custom = new CustomParsers([chars], times, limits);
  // 20 inputs (within the limit of 50) that would make 200 events.
  const body = [{ messages: Array.from({ length: 20 }, () => 'abcdefghij') }];
  t.match(codeOf(() => normalizeUnstructured(body, 1, limits, 'chars', custom)), /^E_VALIDATION: .*more than 50 events/);
  t.ok(custom.output.events <= 60, `stopped after ${custom.output.events} events, not after all 200`);
  const ok = new CustomParsers([chars], times, limits);
  const groups = normalizeUnstructured([{ messages: ['abcdefghij', 'abcdefghij'] }], 1, limits, 'chars', ok);
  t.equal(groups.reduce((n, g) => n + g.events.length, 0), 20, 'within the limit everything is kept');
  t.equal(ok.output.events, 20);
});

t.test('parser output counts against the request byte bound (raw and structured too)', async (t) => {
  const long = 'x'.repeat(300);
  const custom = new CustomParsers([{ ...chars, script: 'a := @rawstring | b := @rawstring' }], times, limits, 2000);
  t.match(codeOf(() => normalizeUnstructured([{ messages: [long, long, long] }], 1, limits, 'chars', custom)), /^E_BODY_TOO_LARGE: .*more than 2000 bytes of events/);
  const raw = new CustomParsers([{ ...chars, script: 'a := @rawstring' }], times, limits, 100);
  t.match(codeOf(() => normalizeRaw(long, 1, limits, 'chars', raw)), /^E_BODY_TOO_LARGE/);
  const st = new CustomParsers([chars], times, limits);
  const events = Array.from({ length: 10 }, () => ({ timestamp: 1, rawstring: 'abcdefghij' }));
  t.match(codeOf(() => normalizeStructured([{ tags: { host: 'h' }, events }], 1, limits, null, { parser: st.get('chars')!, custom: st })), /^E_VALIDATION: .*more than 50 events/);
});

t.test('the ingest task reports the bound as a 4xx result, never a crash', async (t) => {
  const body = new TextEncoder().encode(JSON.stringify([{ messages: Array.from({ length: 20 }, () => 'abcdefghij') }]));
  const r = runIngestTask({ kind: 'unstructured', body, contentEncoding: undefined, maxDecompressedBytes: 1 << 20, limits, parser: 'chars', repositoryId: 'r', at: 1, customParsers: [chars], parserLimits: times });
  t.match(r, { ok: false, code: 'E_VALIDATION' });
});
