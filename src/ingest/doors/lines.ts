/**
 * Messages read by an ingest listener (src/ingest/listeners/), one event each, parsed by the
 * listener's parser (`syslog` by default). They travel to the parsing thread as one buffer of
 * length-prefixed UTF-8 frames (u32 LE length, bytes), which encodeFrames makes.
 */
import { LogsvcError } from '../../lib/errors.js';
import type { EventGroup } from '../../events/index.js';
import type { IngestLimits } from '../limits.js';
import type { CustomParsers } from '../custom-parsing.js';
import { DoorSink } from './common.js';

export interface LinesParams {
  door: 'lines';
}

export function encodeFrames(messages: readonly Buffer[]): Buffer {
  let n = 0;
  for (const m of messages) n += 4 + m.length;
  const out = Buffer.allocUnsafe(n);
  let at = 0;
  for (const m of messages) {
    out.writeUInt32LE(m.length, at);
    m.copy(out, at + 4);
    at += 4 + m.length;
  }
  return out;
}

export function normalizeLines(body: Buffer, parser: string | null, limits: IngestLimits, ingestTs: number, custom?: CustomParsers): EventGroup[] {
  const sink = new DoorSink(limits, ingestTs, custom);
  const name = parser ?? 'syslog';
  for (let at = 0; at < body.length; ) {
    if (at + 4 > body.length) throw new LogsvcError('E_BAD_REQUEST', 'listener frames are cut short');
    const len = body.readUInt32LE(at);
    if (at + 4 + len > body.length) throw new LogsvcError('E_BAD_REQUEST', 'listener frames are cut short');
    const text = body.toString('utf8', at + 4, at + 4 + len);
    at += 4 + len;
    sink.add(name, { rawstring: text, fields: {}, timestamp: null, timezone: null, tags: {}, type: name, parse: true });
  }
  return sink.list();
}
