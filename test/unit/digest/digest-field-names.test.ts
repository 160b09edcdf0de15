// Events whose field names are Object.prototype members ("constructor", "toString", ...): ingest keeps
// them as ordinary fields, so the digest must store them like any other. Kept in its own file in case
// a regression writes onto Object.prototype (teardown undoes such writes).
import t from 'tap';
import { join } from 'node:path';
import { Digest, InlineBlockEncoder } from '../../../src/digest/index.js';
import { EmbeddedDigestQueue } from '../../../src/queue/index.js';
import { SegmentCatalog } from '../../../src/segments/catalog.js';
import { decodeBlockEvents } from '../../../src/segments/block.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { listSegmentFiles } from '../../../src/segments/catalog.js';
import { parseSegment } from '../../../src/segments/segment-file.js';
import { encodeRecord, type IngestRecord } from '../../../src/events/index.js';
import { ManualClock } from '../../../src/lib/clock.js';
import { silentLogger, type Logger } from '../../../src/lib/logger.js';
import { readFile } from 'node:fs/promises';
import { group, record, settings, T0, tempDir } from './helpers.js';

t.teardown(() => {
  for (const target of [Object.prototype, Object] as unknown as Record<string, unknown>[]) for (const k of Object.keys(target)) if (/^\d+$/.test(k)) delete target[k];
});

const notified = (): Promise<void> => new Promise((r) => setImmediate(r));

function recordingLogger(): { logger: Logger; errors: string[] } {
  const errors: string[] = [];
  return { logger: { ...silentLogger, error: (msg, f) => errors.push(`${msg} ${JSON.stringify(f ?? {})}`) }, errors };
}

async function rig(root: string, logger: Logger): Promise<{ q: EmbeddedDigestQueue; digest: Digest; fatal: Error[] }> {
  const fatal: Error[] = [];
  const q = await EmbeddedDigestQueue.open({ dir: join(root, 'queue'), partitions: 1, logger, onFatal: (e) => fatal.push(e) });
  const digest = new Digest({
    dataDir: root,
    queue: q,
    catalog: await SegmentCatalog.load(join(root, 'segments'), logger, T0),
    encoder: new InlineBlockEncoder(),
    clock: new ManualClock(T0),
    logger,
    settings: settings(join(root, 'segments'), { blockTargetBytes: 1e9, flushBlockMs: 3_600_000 }),
    openBlockBudgetBytes: 64 * 1024 * 1024,
    sealUndigestedAboveBytes: 1024 * 1024 * 1024,
    onLatency: () => undefined,
    onFatal: (e) => fatal.push(e),
  });
  return { q, digest, fatal };
}

/** Stored events as [rawstring, own "constructor" field or null], in segment order. */
async function stored(root: string): Promise<[string, string | null][]> {
  const out: [string, string | null][] = [];
  for (const path of await listSegmentFiles(join(root, 'segments'))) {
    const buf = await readFile(path);
    const seg = parseSegment(buf, path);
    for (const b of seg.blocks) {
      for (const e of decodeBlockEvents(buf, b.pos, b, lz4Codec)) out.push([e.rawstring, (Object.getOwnPropertyDescriptor(e.fields, 'constructor')?.value as string | undefined) ?? null]);
    }
  }
  return out;
}

const recs = (): IngestRecord[] => [
  record([group('dsA', [{ timestamp: T0, timezone: 'Z', rawstring: 'plain one', fields: { a: '1' } }])]),
  record([group('dsA', [{ timestamp: T0, timezone: 'Z', rawstring: 'class Foo', fields: { constructor: 'Foo', a: '2' } }])]),
  record([group('dsA', [{ timestamp: T0, timezone: 'Z', rawstring: 'plain three', fields: { a: '3' } }])]),
];

t.test('live: an event with a field named "constructor" is digested with that field', async (t) => {
  const root = await tempDir(t);
  const { logger, errors } = recordingLogger();
  const { q, digest, fatal } = await rig(root, logger);
  await digest.start([0]);
  for (const r of recs()) await q.append(0, encodeRecord(r).payload, encodeRecord(r).summary);
  await notified();
  await digest.stop();
  t.strictSame(await stored(root), [
    ['plain one', null],
    ['class Foo', 'Foo'],
    ['plain three', null],
  ]);
  t.strictSame(errors, [], 'nothing logged as failed');
  t.strictSame(fatal, []);
  await q.close();
});

t.test('replay: a queue holding such a record can be digested at start-up', async (t) => {
  const root = await tempDir(t);
  {
    const { q } = await rig(root, silentLogger);
    for (const r of recs()) await q.append(0, encodeRecord(r).payload, encodeRecord(r).summary);
    await q.close();
  }
  const { logger, errors } = recordingLogger();
  const { q, digest, fatal } = await rig(root, logger);
  let startError: string | null = null;
  try {
    await digest.start([0]);
  } catch (err) {
    startError = `${(err as Error).name}: ${(err as Error).message}`;
  }
  t.equal(startError, null, 'start() replays the queue without throwing');
  if (startError === null) {
    await digest.stop();
    t.strictSame(await stored(root), [
      ['plain one', null],
      ['class Foo', 'Foo'],
      ['plain three', null],
    ]);
  }
  t.strictSame(errors, []);
  t.strictSame(fatal, []);
  await q.close();
});
