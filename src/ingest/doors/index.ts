/**
 * The shippers' doors on the ingest pipeline: a task of kind 'door' carries one of these parameter
 * sets, and runDoor turns its (decompressed) body into event groups plus what the door's answer
 * needs (bulk item statuses, OTLP partial success). Runs wherever the pipeline runs.
 */
import type { EventGroup } from '../../events/index.js';
import type { IngestLimits } from '../limits.js';
import type { CustomParsers } from '../custom-parsing.js';
import { normalizeHec, type HecParams } from './hec.js';
import { bulkReply, normalizeBulk, type BulkParams, type BulkReply } from './elastic-bulk.js';
import { normalizeOtlp, type OtlpParams, type OtlpReply } from './otlp.js';
import { normalizeLines, type LinesParams } from './lines.js';

export type DoorParams = HecParams | BulkParams | OtlpParams | LinesParams;
export type DoorReply = BulkReply | OtlpReply;

export function runDoor(p: DoorParams, body: Buffer, parser: string | null, limits: IngestLimits, ingestTs: number, custom?: CustomParsers): { groups: EventGroup[]; reply?: DoorReply } {
  switch (p.door) {
    case 'hec':
      return { groups: normalizeHec(body.toString('utf8'), p, parser, limits, ingestTs, custom) };
    case 'elastic-bulk': {
      const { groups, items } = normalizeBulk(body.toString('utf8'), p, parser, limits, ingestTs, custom);
      return { groups, reply: bulkReply(items) };
    }
    case 'otlp': {
      const { groups, reply } = normalizeOtlp(body, p, parser, limits, ingestTs, custom);
      return { groups, reply };
    }
    case 'lines':
      return { groups: normalizeLines(body, parser, limits, ingestTs, custom) };
  }
}
