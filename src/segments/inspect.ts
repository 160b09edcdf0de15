/**
 * Operator views of segment files (read-only): `inspectSegment` renders a segment's header, blocks
 * and events; `verifyDataDir` checks every checksum of every segment and digest-queue file.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eventId } from '../events/index.js';
import { scanQueueFile } from '../queue/index.js';
import { decodeBlockEvents } from './block.js';
import { lz4Codec } from './codec.js';
import { listSegmentFiles } from './catalog.js';
import { parseSegment } from './segment-file.js';

const iso = (ms: number): string => (Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms));

/** Lines describing the segment; events as one JSON object per line (lines starting with "{"). */
export async function inspectSegment(path: string, opts: { events: boolean }): Promise<string[]> {
  const buf = await readFile(path);
  const seg = parseSegment(buf, path);
  const m = seg.meta;
  const out: string[] = [
    `segment ${m.id}`,
    `  file: ${path} (${buf.length} bytes)`,
    `  repository: ${m.repo}  datasource: ${m.ds}  partition: ${m.partition}`,
    `  tags: ${Object.entries(m.tags).map(([k, v]) => `#${k}=${v}`).join(' ') || '(none)'}`,
    `  created: ${iso(m.createdAt)}  state: ${seg.footer === null ? 'open (no footer)' : `closed ${iso(seg.footer.closedAt)}`}`,
    `  blocks: ${seg.blocks.length}  events: ${seg.blocks.reduce((n, b) => n + b.eventCount, 0)}`,
  ];
  for (const d of seg.damage) out.push(`  DAMAGE at ${d.at}..${d.to}: ${d.reason}`);
  seg.blocks.forEach((b, i) => {
    out.push(
      `  block ${i} @${b.pos}: ${b.eventCount} events, ${iso(b.minTs)}..${iso(b.maxTs)}, ` +
        `queue ${b.firstOffset}/${b.firstIndex}..${b.lastOffset}/${b.lastIndex}, ` +
        `${b.uncompressedLength} -> ${b.compressedLength} bytes, bloom ${b.bloomLength} bytes, grams ${b.gramLength} bytes, header ${b.headerLength} bytes${b.framed === true ? ' (column frames)' : ''}, crc ok`,
    );
  });
  if (opts.events) {
    const tags: Record<string, string> = {};
    for (const [k, v] of Object.entries(m.tags)) tags[`#${k}`] = v;
    for (const b of seg.blocks) {
      for (const e of decodeBlockEvents(buf, b.pos, b, lz4Codec)) {
        out.push(
          JSON.stringify({
            '@id': eventId(m.partition, e.offset, e.index, e.timestamp),
            '@timestamp': e.timestamp,
            '@timezone': e.timezone,
            '@ingesttimestamp': String(e.ingestTimestamp),
            '#repo': m.repo,
            ...tags,
            ...e.fields,
            '@rawstring': e.rawstring,
          }),
        );
      }
    }
  }
  return out;
}

export interface VerifyReport {
  segments: number;
  blocks: number;
  queueFiles: number;
  queueRecords: number;
  problems: string[];
}

export async function verifyDataDir(dataDir: string): Promise<VerifyReport> {
  const report: VerifyReport = { segments: 0, blocks: 0, queueFiles: 0, queueRecords: 0, problems: [] };
  for (const path of await listSegmentFiles(join(dataDir, 'segments'))) {
    report.segments++;
    try {
      const buf = await readFile(path);
      const seg = parseSegment(buf, path);
      for (const d of seg.damage) report.problems.push(`${path}: bytes ${d.at}..${d.to}: ${d.reason}`);
      if (seg.footer === null) report.problems.push(`${path}: no valid footer (open segment, or footer damaged)`);
      else if (seg.footer.blocks.length !== seg.blocks.length) report.problems.push(`${path}: footer lists ${seg.footer.blocks.length} blocks, ${seg.blocks.length} are intact`);
      for (const b of seg.blocks) {
        report.blocks++;
        try {
          decodeBlockEvents(buf, b.pos, b, lz4Codec);
        } catch (err) {
          report.problems.push(`${path}: block at ${b.pos} does not decode: ${(err as Error).message}`);
        }
      }
    } catch (err) {
      report.problems.push(`${path}: ${(err as Error).message}`);
    }
  }
  const queueDir = join(dataDir, 'queue');
  let parts: string[] = [];
  try {
    parts = (await readdir(queueDir)).sort();
  } catch {
    // no queue yet
  }
  for (const p of parts) {
    for (const name of (await readdir(join(queueDir, p))).filter((n) => n.endsWith('.dq')).sort()) {
      report.queueFiles++;
      const path = join(queueDir, p, name);
      const buf = await readFile(path);
      const scan = scanQueueFile(buf, Number(name.slice(0, -3)));
      report.queueRecords += scan.records.length;
      for (const d of scan.damaged) report.problems.push(`${path}: bytes ${d.from}..${d.to} hold no intact record`);
    }
  }
  return report;
}
