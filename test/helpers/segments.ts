/**
 * Reading events back from a stopped node's data dir through the CLI: every `*.seg` file under
 * `<data-dir>/segments/` through `logsvc segments inspect` (events are the lines starting with "{"),
 * and `logsvc segments verify`. Each CLI run is bounded; a few run at a time (each costs a Node start).
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from './node-process.js';

/** One event as `segments inspect` prints it: @id, @timestamp, @timezone, @ingesttimestamp, #tags, fields, @rawstring. */
export type StoredEvent = Record<string, any>;

export interface InspectedSegment {
  file: string;
  /** Exit code of `segments inspect`; non-zero when the file is unreadable (e.g. a damaged header). */
  code: number | null;
  /** Datasource id from the header lines ("" when unreadable). */
  ds: string;
  partition: number;
  /** The "  DAMAGE at …" lines. */
  damage: string[];
  /** The "  block i @pos: …" lines, parsed. */
  blocks: { pos: number; length: number; events: number }[];
  events: StoredEvent[];
  stdout: string;
  stderr: string;
}

/** Every segment file under `<dataDir>/segments`, sorted; files kept aside as `*.damaged-*` are not segments. */
export async function segmentFiles(dataDir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory() && depth < 4) await walk(p, depth + 1);
      else if (e.isFile() && e.name.endsWith('.seg')) out.push(p);
    }
  };
  await walk(join(dataDir, 'segments'), 0);
  return out.sort();
}

const BLOCK_LINE = /^ {2}block \d+ @(\d+): (\d+) events, .* (\d+) -> (\d+) bytes, bloom (\d+) bytes, grams (\d+) bytes(?:, header (\d+) bytes)?/;

export async function inspectSegment(file: string): Promise<InspectedSegment> {
  const r = await runCli(['segments', 'inspect', file], 60_000);
  const seg: InspectedSegment = { file, code: r.code, ds: '', partition: -1, damage: [], blocks: [], events: [], stdout: r.stdout, stderr: r.stderr };
  for (const line of r.stdout.split('\n')) {
    if (line.startsWith('{')) {
      seg.events.push(JSON.parse(line) as StoredEvent);
      continue;
    }
    const ds = /datasource: (\S+) {2}partition: (\d+)/.exec(line);
    if (ds !== null) {
      seg.ds = ds[1]!;
      seg.partition = Number(ds[2]);
    }
    if (line.startsWith('  DAMAGE at ')) seg.damage.push(line.trim());
    const b = BLOCK_LINE.exec(line);
    // Block layout (block.ts): header (68 bytes up to format 4; format 5 with its column directory), bloom filter, gram filter, body.
    if (b !== null) seg.blocks.push({ pos: Number(b[1]), events: Number(b[2]), length: Number(b[7] ?? 68) + Number(b[5]) + Number(b[6]) + Number(b[4]) });
  }
  return seg;
}

/** Runs `segments inspect` on every segment file, `parallel` at a time. */
export async function inspectAll(dataDir: string, parallel = 4): Promise<InspectedSegment[]> {
  const files = await segmentFiles(dataDir);
  const out: InspectedSegment[] = new Array(files.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const i = next++;
      out[i] = await inspectSegment(files[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, files.length) }, worker));
  return out;
}

/** Every event of every segment; throws if any segment could not be inspected. */
export async function readAllEvents(dataDir: string): Promise<StoredEvent[]> {
  const segs = await inspectAll(dataDir);
  const bad = segs.filter((s) => s.code !== 0);
  if (bad.length > 0) throw new Error(`segments inspect failed on ${bad.map((s) => `${s.file} (exit ${s.code}): ${s.stderr.trim()}`).join('; ')}`);
  return segs.flatMap((s) => s.events);
}

export interface VerifyResult {
  code: number | null;
  problems: string[];
  summary: string;
  stdout: string;
}

export async function verifyDataDir(dataDir: string): Promise<VerifyResult> {
  const r = await runCli(['segments', 'verify', dataDir], 60_000);
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  return {
    code: r.code,
    problems: lines.filter((l) => l.startsWith('PROBLEM ')).map((l) => l.slice('PROBLEM '.length)),
    summary: lines.at(-1) ?? '',
    stdout: r.stdout + r.stderr,
  };
}

/** Events grouped by the value of one field (e.g. a unique id attribute). */
export function byField(events: StoredEvent[], field: string): Map<string, StoredEvent[]> {
  const m = new Map<string, StoredEvent[]>();
  for (const e of events) {
    const v = e[field];
    if (typeof v !== 'string') continue;
    const list = m.get(v);
    if (list === undefined) m.set(v, [e]);
    else list.push(e);
  }
  return m;
}

/** The "#name" keys of an event (its tags, #repo included), sorted. */
export function tagKeys(e: StoredEvent): string[] {
  return Object.keys(e)
    .filter((k) => k.startsWith('#'))
    .sort();
}

/** A deterministic pseudo-random generator (mulberry32) for reproducible offsets and timings. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
