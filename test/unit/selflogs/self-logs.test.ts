import t from 'tap';
import { SelfLogs, logEvent } from '../../../src/selflogs/self-logs.js';
import { teeLogger, type LogEntry, type Logger } from '../../../src/lib/logger.js';

const entry = (message: string): LogEntry => ({ time: 1_700_000_000_000, level: 'info', message, fields: undefined });

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const rec = (level: string) => (m: string) => void lines.push(`${level} ${m}`);
  return { lines, debug: rec('debug'), info: rec('info'), warn: rec('warn'), error: rec('error') };
}

t.test('logEvent: level, module, message and the other fields', async (t) => {
  const e = logEvent({ time: 1_700_000_000_000, level: 'warn', message: 'disk slow', fields: { module: 'digest', partition: 3, why: 'a b' } }, 2);
  t.same(e.fields, { level: 'WARN', module: 'digest', message: 'disk slow', node: '2', partition: '3', why: 'a b' });
  t.equal(e.rawstring, '2023-11-14T22:13:20.000Z WARN [digest] disk slow partition=3 why="a b"');
  t.equal(e.timestamp, 1_700_000_000_000);
});

t.test('a full buffer drops lines and counts them; nothing blocks', async (t) => {
  let dropped = 0;
  const s = new SelfLogs({ stderr: recordingLogger(), bufferLines: 100, nodeId: 1, onDropped: (n) => (dropped += n) });
  for (let i = 0; i < 250; i++) s.push(entry(`line ${i}`));
  t.equal(dropped, 150);
  const got: number[] = [];
  s.start({ repositoryId: () => 'r', admit: () => {}, ingest: async (_r, groups) => void got.push(groups[0]!.events.length) });
  await s.stop();
  t.same(got, [100], 'the buffered lines are ingested in one record');
});

t.test('a failing ingest drops the batch, says so on stderr only, and does not feed itself', async (t) => {
  const stderr = recordingLogger();
  let calls = 0;
  const s = new SelfLogs({ stderr, bufferLines: 1000, nodeId: 1 });
  // The node's logger taps into the buffer; the self-logger's own problems must not.
  const logger = teeLogger(recordingLogger(), 'info', s.push);
  s.start({
    repositoryId: () => 'r',
    admit: () => {},
    ingest: async () => {
      calls++;
      throw new Error('disk full');
    },
  });
  logger.info('one');
  logger.info('two');
  await s.flush();
  t.equal(calls, 1);
  t.equal(s.dropped, 2);
  t.equal(stderr.lines.length, 1, 'one problem line on stderr');
  t.match(stderr.lines[0], /not ingested into humio/);
  await s.flush();
  t.equal(calls, 1, 'nothing new to ingest: no second attempt (no loop)');
  logger.info('three');
  await s.flush();
  t.equal(stderr.lines.length, 1, 'problems are rate limited');
  await s.stop();
});

t.test('backpressure (admit throws) drops without calling ingest', async (t) => {
  let calls = 0;
  const s = new SelfLogs({ stderr: recordingLogger(), bufferLines: 1000, nodeId: 1 });
  s.push(entry('x'));
  s.start({ repositoryId: () => 'r', admit: () => { throw new Error('paused'); }, ingest: async () => void calls++ });
  await s.stop();
  t.equal(calls, 0);
  t.equal(s.dropped, 1);
});

t.test('no humio repository: lines are dropped', async (t) => {
  const s = new SelfLogs({ stderr: recordingLogger(), bufferLines: 1000, nodeId: 1 });
  s.push(entry('x'));
  s.start({ repositoryId: () => undefined, admit: () => {}, ingest: async () => {} });
  await s.stop();
  t.equal(s.dropped, 1);
});
