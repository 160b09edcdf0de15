/**
 * One ingest body from arrival to durability, shared by the HTTP endpoints, the shippers' doors
 * and the ingest listeners: admit (backpressure), parse inline or on the worker pool, commit.
 */
import { LogsvcError } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';
import type { Repository } from '../global/index.js';
import type { ParserService } from '../parsers/index.js';
import type { IngestService } from './ingest-service.js';
import type { IngestLimits } from './limits.js';
import { hasCustomParsers, runIngestTask, unwrapIngestResult, type IngestKind, type IngestTask, type IngestTaskResult } from './pipeline.js';
import type { DoorParams, DoorReply } from './doors/index.js';

export interface IngestTarget {
  repo: Repository;
  /** The parser attached to the ingest token (or listener), if any. */
  parser: string | null;
}

/** What running an ingest body needs (the HTTP services have all of it). */
export interface IngestRunDeps {
  ingest: IngestService;
  ingestLimits: IngestLimits;
  maxDecompressedBytes: number;
  /** Bodies at least this large are parsed on the worker pool. */
  offloadIngestBytes: number;
  workers: { ingest(task: IngestTask): Promise<IngestTaskResult> };
  parsers: ParserService;
  clock: Clock;
}

/**
 * Admits, parses (inline or on the worker pool) and commits one ingest body; resolves once its
 * events are durable. `door` makes it a shipper protocol's body (src/ingest/doors/); their custom
 * parsers are looked up as for unstructured bodies when `anyParser` (a HEC sourcetype or a bulk
 * document's type may name one), else only the target's.
 */
export async function ingestBody(
  s: IngestRunDeps,
  t: IngestTarget,
  kind: IngestKind,
  raw: Buffer,
  contentEncoding: string | undefined,
  door?: { params: DoorParams; anyParser: boolean },
): Promise<{ events: number; reply?: DoorReply }> {
  s.ingest.admit();
  const task: IngestTask = {
    kind,
    body: raw,
    contentEncoding,
    maxDecompressedBytes: s.maxDecompressedBytes,
    limits: s.ingestLimits,
    parser: t.parser,
    repositoryId: t.repo.id,
    at: s.clock.now(),
  };
  if (door !== undefined) task.door = door.params;
  task.customParsers = s.parsers.defsForIngest(t.repo.id, t.parser, door === undefined ? (kind as 'structured' | 'unstructured' | 'raw') : door.anyParser ? 'unstructured' : 'raw');
  if (hasCustomParsers(task)) {
    task.parserLimits = s.parsers.timeLimits;
    const room = s.ingest.datasourceRoom(t.repo.id);
    if (room !== undefined) task.datasourceRoom = room;
  } else delete task.customParsers;
  // Large bodies are parsed on the worker pool; small ones here, where a hop would cost more.
  // Custom parsers never run here: their cost does not follow the body's size (a small gzip body,
  // a costly script), and this thread serves every acknowledgement, query and health check.
  const result = raw.length >= s.offloadIngestBytes || hasCustomParsers(task) ? await s.workers.ingest(task) : runIngestTask(task);
  if (!result.ok && result.detail !== undefined) throw Object.assign(new LogsvcError(result.code, result.message), { detail: result.detail });
  const { payload, summary, events } = unwrapIngestResult(result);
  await s.ingest.commit(t.repo.id, payload, summary);
  return result.ok && result.reply !== undefined ? { events, reply: result.reply } : { events };
}

