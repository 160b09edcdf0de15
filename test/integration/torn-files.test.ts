/**
 * Damaged files on disk, with the node stopped: a digest-queue file torn mid-record (a crash during
 * a write), a flipped bit in the middle of a queue file, and segment files truncated or bit-flipped
 * at several offsets. The node must start anyway, serve every record before (and, for a flipped
 * bit, after) the damage, and never hand back a corrupted event: every event read back with
 * `logsvc segments inspect` is one that was ingested, byte for byte. Offsets come from a fixed seed.
 *
 * Queue file layout (queue-file.ts): 8-byte header, then frames of
 *   u32 length (= 8 + payload) | u32 CRC-32C | u64 offset | payload.
 */
import t, { type Test } from 'tap';
import { cp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startNode, tempDir, type TestNode } from '../helpers/node-process.js';
import { api, gql } from '../helpers/http.js';
import { byField, inspectAll, seededRandom, verifyDataDir, type InspectedSegment, type StoredEvent } from '../helpers/segments.js';

const SEED = 0x70_72_6e;
const rnd = seededRandom(SEED);
const pick = (lo: number, hiExclusive: number): number => lo + Math.floor(rnd() * (hiExclusive - lo));

/** Records stay in the queue only: blocks are written after an hour, or at a graceful stop. */
const QUEUE_ONLY = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 1', 'flush_block_seconds = 3600', 'worker_threads = 1', ''].join('\n');
/** Small blocks, written within a second: segments of many blocks. */
const SMALL_BLOCKS = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 1', 'flush_block_seconds = 1', 'block_target_bytes = 1024', 'worker_threads = 1', ''].join('\n');

interface SentEvent {
  host: string;
  timestamp: number;
  rawstring: string;
  attributes: Record<string, string>;
}

/** What was sent, by id (the `tid` attribute). */
const sent = new Map<string, SentEvent>();

async function setup(node: TestNode): Promise<string> {
  const r = await gql(node.url, node.adminToken, 'mutation { createRepository(name: "torn") { repository { ingestTokens { token } } } }');
  if (r.errors !== undefined) throw new Error(`createRepository failed: ${JSON.stringify(r.errors)}`);
  return r.data.createRepository.repository.ingestTokens[0].token as string;
}

/** The token survives restarts (global state); read it again from a restarted node. */
async function tokenOf(node: TestNode): Promise<string> {
  const r = await gql(node.url, node.adminToken, '{ repository(name: "torn") { ingestTokens { token } } }');
  return r.data.repository.ingestTokens[0].token as string;
}

/** One request (so one queue record) of `count` events per host; returns the ids, asserting 200. */
async function send(t: Test, node: TestNode, token: string, prefix: string, hosts: string[], count: number): Promise<string[]> {
  const ids: string[] = [];
  const body = hosts.map((host) => {
    const events = [];
    for (let i = 0; i < count; i++) {
      const id = `${prefix}-${host}-${i}`;
      const ev: SentEvent = {
        host,
        timestamp: 1_700_000_000_000 + sent.size,
        rawstring: `torn-files event ${id} ${'abcdefghij'.repeat(1 + (sent.size % 7))} ünïcødé ✓`,
        attributes: { tid: id, n: String(i), note: `payload of ${id}` },
      };
      sent.set(id, ev);
      ids.push(id);
      events.push({ timestamp: ev.timestamp, rawstring: ev.rawstring, attributes: ev.attributes });
    }
    return { tags: { host }, events };
  });
  const res = await api(node.url, '/api/v1/ingest/service-structured', { token, body: JSON.stringify(body) });
  if (res.status !== 200) t.fail(`ingest ${prefix}: ${res.status} ${res.text}`);
  return ids;
}

/** True when the stored event is exactly what was sent under its id. */
function intact(e: StoredEvent): boolean {
  const s = sent.get(String(e.tid));
  if (s === undefined) return false;
  const own = Object.keys(e)
    .filter((k) => !k.startsWith('@') && !k.startsWith('#'))
    .sort();
  return (
    e['@rawstring'] === s.rawstring &&
    e['@timestamp'] === s.timestamp &&
    e['@timezone'] === 'Z' &&
    e['#host'] === s.host &&
    JSON.stringify(own) === JSON.stringify(Object.keys(s.attributes).sort()) &&
    own.every((k) => e[k] === s.attributes[k])
  );
}

/** Asserts that `present` ids are stored exactly once, `absent` ones not at all, and nothing else or altered. */
function checkStored(t: Test, events: StoredEvent[], present: string[], absent: string[]): void {
  const found = byField(events, 'tid');
  let missing = 0;
  let doubled = 0;
  for (const id of present) {
    const n = found.get(id)?.length ?? 0;
    if (n === 0) missing++;
    if (n > 1) doubled++;
  }
  t.equal(missing, 0, `all ${present.length} expected events are stored`);
  t.equal(doubled, 0, 'none twice');
  const resurrected = absent.filter((id) => found.has(id));
  t.same(resurrected, [], `none of the ${absent.length} lost events is stored`);
  const bad = events.filter((e) => !intact(e));
  t.same(
    bad.map((e) => JSON.stringify(e).slice(0, 300)),
    [],
    'every stored event is one that was sent, byte for byte',
  );
  t.equal(events.length, present.length, 'nothing else is stored');
}

interface Frame {
  start: number;
  end: number;
}

/** The newest queue file of partition 0 and its intact frames, in order. */
async function queueFrames(dataDir: string): Promise<{ file: string; buf: Buffer; frames: Frame[] }> {
  const dir = join(dataDir, 'queue', 'p0000');
  const names = (await readdir(dir)).filter((n) => n.endsWith('.dq')).sort();
  const file = join(dir, names.at(-1)!);
  const buf = await readFile(file);
  const frames: Frame[] = [];
  let pos = 8;
  while (pos + 16 <= buf.length) {
    const end = pos + 8 + buf.readUInt32LE(pos);
    if (end > buf.length) break;
    frames.push({ start: pos, end });
    pos = end;
  }
  return { file, buf, frames };
}

async function flipBit(file: string, at: number, bit: number): Promise<void> {
  const buf = await readFile(file);
  buf[at]! ^= 1 << bit;
  await writeFile(file, buf);
}

t.test('a queue file torn mid-record: every record before the cut is served, nothing after it', async (t) => {
  const dataDir = await tempDir(t);
  let node = await startNode(t, { dataDir, config: QUEUE_ONLY });
  let token = await setup(node);
  const first: string[][] = [];
  for (let r = 0; r < 24; r++) first.push(await send(t, node, token, `a1-${r}`, ['q'], 3));
  await node.kill();

  // Cut 1: inside the payload of record k1.
  let q = await queueFrames(dataDir);
  t.equal(q.frames.length, 24, 'one queue record per request');
  t.equal(q.frames.at(-1)!.end, q.buf.length, 'the file ends with a whole record');
  const k1 = pick(4, 20);
  const f1 = q.frames[k1]!;
  const cut1 = pick(f1.start + 16, f1.end);
  await truncate(q.file, cut1);
  t.comment(`cut 1: record ${k1} (bytes ${f1.start}..${f1.end}) cut at ${cut1}`);

  node = await startNode(t, { dataDir, config: QUEUE_ONLY });
  t.equal((await api(node.url, '/api/v1/status')).status, 200, 'the node starts on the torn queue');
  const aside = (await readdir(join(dataDir, 'queue', 'p0000'))).filter((n) => n.includes('.damaged-'));
  t.equal(aside.length, 1, `the torn tail is kept aside (${aside.join(', ')})`);
  token = await tokenOf(node);
  const second: string[][] = [];
  for (let r = 0; r < 16; r++) second.push(await send(t, node, token, `a2-${r}`, ['q'], 3));
  await node.kill();

  // Cut 2: inside the 16-byte frame header of a record appended after the first repair.
  q = await queueFrames(dataDir);
  t.equal(q.frames.length, k1 + 16, 'the queue holds the records before cut 1 and the new ones');
  const j2 = pick(2, 14);
  const f2 = q.frames[k1 + j2]!;
  const cut2 = pick(f2.start + 1, f2.start + 16);
  await truncate(q.file, cut2);
  t.comment(`cut 2: record ${k1 + j2} (bytes ${f2.start}..${f2.end}) cut at ${cut2}`);

  node = await startNode(t, { dataDir, config: QUEUE_ONLY });
  token = await tokenOf(node);
  const after = await send(t, node, token, 'a3', ['q'], 2);
  t.equal(await node.stop(), 0, 'graceful stop');

  const events = (await inspectAll(dataDir)).flatMap((s) => {
    t.equal(s.code, 0, `inspect ${s.file}`);
    return s.events;
  });
  const present = [...first.slice(0, k1).flat(), ...second.slice(0, j2).flat(), ...after];
  const absent = [...first.slice(k1).flat(), ...second.slice(j2).flat()];
  checkStored(t, events, present, absent);
  const v = await verifyDataDir(dataDir);
  t.equal(v.code, 0, `segments verify is clean after the repairs: ${v.summary}`);
  t.same(v.problems, []);
});

t.test('a flipped bit in the middle of a queue file loses only that record', async (t) => {
  const dataDir = await tempDir(t);
  let node = await startNode(t, { dataDir, config: QUEUE_ONLY });
  const token = await setup(node);
  const records: string[][] = [];
  for (let r = 0; r < 30; r++) records.push(await send(t, node, token, `b-${r}`, ['q', 'r'], 2));
  await node.kill();

  const q = await queueFrames(dataDir);
  t.equal(q.frames.length, 30, 'one queue record per request');
  // One flip in each part of a frame, in records well apart, none of them the last.
  const parts: [string, (f: Frame) => number][] = [
    ['length', (f) => pick(f.start, f.start + 4)],
    ['checksum', (f) => pick(f.start + 4, f.start + 8)],
    ['offset', (f) => pick(f.start + 8, f.start + 16)],
    ['payload', (f) => pick(f.start + 16, f.end)],
  ];
  const damaged: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const k = 3 + i * 7 + pick(0, 4);
    const [what, where] = parts[i]!;
    const at = where(q.frames[k]!);
    const bit = pick(0, 8);
    await flipBit(q.file, at, bit);
    damaged.push(k);
    t.comment(`flipped bit ${bit} of byte ${at}: the ${what} of record ${k}`);
  }

  node = await startNode(t, { dataDir, config: QUEUE_ONLY });
  t.equal((await api(node.url, '/api/v1/status')).status, 200, 'the node starts');
  t.equal(await node.stop(), 0, 'graceful stop');

  const events = (await inspectAll(dataDir)).flatMap((s) => {
    t.equal(s.code, 0, `inspect ${s.file}`);
    return s.events;
  });
  const present = records.filter((_, k) => !damaged.includes(k)).flat();
  const absent = records.filter((_, k) => damaged.includes(k)).flat();
  checkStored(t, events, present, absent);
  const v = await verifyDataDir(dataDir);
  t.equal(v.code, 1, 'segments verify reports the damage that is still in the queue file');
  t.ok(
    v.problems.some((p) => p.startsWith(q.file)),
    `a problem names ${q.file}`,
  );
  t.equal(v.problems.filter((p) => p.includes('.seg')).length, 0, 'no segment problems');
});

interface Damage {
  kind: 'truncate' | 'flip';
  at: number;
  /** The byte range whose blocks are lost: [from, to). */
  from: number;
  to: number;
  region: string;
}

/** Byte layout of a pristine closed segment, from its inspect output and header. */
interface Layout {
  seg: InspectedSegment;
  size: number;
  blocksStart: number;
  blocksEnd: number;
}

t.test('truncated and bit-flipped segment files: verify names them, intact blocks survive, nothing corrupt is returned', async (t) => {
  const dataDir = await tempDir(t);
  const node = await startNode(t, { dataDir, config: SMALL_BLOCKS });
  const token = await setup(node);
  const hosts = ['s0', 's1', 's2', 's3'];
  const allIds: string[] = [];
  for (let r = 0; r < 12; r++) allIds.push(...(await send(t, node, token, `c-${r}`, hosts, 4)));
  t.equal(await node.stop(), 0, 'graceful stop: every block is in a closed segment');

  const pristineSegs = await inspectAll(dataDir);
  t.equal(pristineSegs.length, hosts.length, 'one segment per tag set');
  const layouts = new Map<string, Layout>();
  for (const s of pristineSegs) {
    t.equal(s.code, 0);
    t.ok(s.blocks.length >= 4, `${s.file}: ${s.blocks.length} blocks`);
    t.equal(s.events.length, s.blocks.reduce((n, b) => n + b.events, 0));
    const size = (await readFile(s.file)).length;
    layouts.set(s.file, { seg: s, size, blocksStart: s.blocks[0]!.pos, blocksEnd: s.blocks.at(-1)!.pos + s.blocks.at(-1)!.length });
  }
  checkStored(t, pristineSegs.flatMap((s) => s.events), allIds, []);
  const clean = await verifyDataDir(dataDir);
  t.equal(clean.code, 0, `pristine data dir verifies: ${clean.summary}`);

  const pristine = await tempDir(t);
  await cp(dataDir, pristine, { recursive: true });
  const files = [...layouts.keys()];

  // Each round damages every segment in a different way; the damage kinds rotate over the files.
  const kinds: ((l: Layout) => Damage)[] = [
    (l) => {
      const at = pick(l.blocksStart + 1, l.blocksEnd);
      return { kind: 'truncate', at, from: at, to: Infinity, region: 'blocks' };
    },
    (l) => {
      const at = pick(l.blocksStart, l.blocksEnd);
      return { kind: 'flip', at, from: at, to: at + 1, region: 'a block' };
    },
    (l) => {
      const at = pick(l.blocksEnd, l.size);
      return { kind: 'flip', at, from: at, to: at + 1, region: 'the footer' };
    },
    (l) => {
      const at = pick(l.blocksEnd, l.size);
      return { kind: 'truncate', at, from: l.size, to: Infinity, region: 'the footer' };
    },
    (l) => {
      const at = pick(0, l.blocksStart);
      // A damaged header loses the segment's identity (repository, tags): all of it.
      return { kind: 'flip', at, from: 0, to: Infinity, region: 'the header' };
    },
    (l) => {
      // A second flip in the blocks of the same file.
      const at = pick(l.blocksStart, l.blocksEnd);
      return { kind: 'flip', at, from: at, to: at + 1, region: 'a block (second)' };
    },
  ];

  const rounds = 2;
  for (let round = 0; round < rounds; round++) {
    await t.test(`round ${round}`, async (t) => {
      await rm(dataDir, { recursive: true, force: true });
      await cp(pristine, dataDir, { recursive: true });
      const damages = new Map<string, Damage[]>();
      for (let i = 0; i < files.length; i++) {
        const file = files[i]!;
        const l = layouts.get(file)!;
        const kindIdx = (i + round * files.length) % kinds.length;
        const list = [kinds[kindIdx]!(l)];
        if (list[0]!.kind === 'flip' && list[0]!.region === 'a block') list.push(kinds[5]!(l));
        damages.set(file, list);
        // Flips first (positions refer to the pristine file), then a truncation.
        for (const d of list) if (d.kind === 'flip') await flipBit(file, d.at, pick(0, 8));
        for (const d of list) if (d.kind === 'truncate') await truncate(file, d.at);
        t.comment(`${file.slice(dataDir.length)}: ${list.map((d) => `${d.kind} at ${d.at} (${d.region}; blocks ${l.blocksStart}..${l.blocksEnd}, size ${l.size})`).join(', ')}`);
      }

      const v = await verifyDataDir(dataDir);
      t.equal(v.code, 1, 'segments verify exits 1');
      for (const file of files) t.ok(v.problems.some((p) => p.startsWith(file)), `verify names ${file.slice(dataDir.length)}`);

      const restarted = await startNode(t, { dataDir, config: SMALL_BLOCKS });
      t.equal((await api(restarted.url, '/api/v1/status')).status, 200, 'the node starts on the damaged segments');
      const after = await send(t, restarted, await tokenOf(restarted), `after-${round}`, ['s0', 's1'], 2);
      t.equal(await restarted.stop(), 0, 'graceful stop');

      const segs = await inspectAll(dataDir);
      const returned: StoredEvent[] = [];
      let mustHave: string[] = [...after];
      const mayHave = new Set<string>();
      for (const s of segs) {
        returned.push(...s.events);
        const l = layouts.get(s.file);
        if (l === undefined) {
          t.equal(s.code, 0, `${s.file.slice(dataDir.length)} (written after the restart): inspect works`);
          continue;
        }
        const list = damages.get(s.file)!;
        const header = list.some((d) => d.from === 0);
        if (header) t.not(s.code, 0, `${s.file.slice(dataDir.length)}: a damaged header makes the file unreadable`);
        else t.equal(s.code, 0, `${s.file.slice(dataDir.length)}: inspect works`);
        // Assign the pristine events to their blocks, in order.
        let e = 0;
        for (const b of l.seg.blocks) {
          const ids = l.seg.events.slice(e, e + b.events).map((x) => String(x.tid));
          e += b.events;
          const hit = list.some((d) => d.from < b.pos + b.length && b.pos < d.to);
          if (hit) for (const id of ids) mayHave.add(id);
          else mustHave = mustHave.concat(ids);
        }
      }
      const found = byField(returned, 'tid');
      const missing = mustHave.filter((id) => (found.get(id)?.length ?? 0) !== 1);
      t.same(missing, [], `all ${mustHave.length} events of intact blocks are returned exactly once`);
      if (missing.length > 0) {
        // Diagnostics: what the node logged and what each segment holds.
        t.comment(`node stderr:\n${restarted.stderr()}`);
        for (const s of segs) t.comment(`${s.file} (exit ${s.code}):\n${s.stdout.split('\n').filter((x) => !x.startsWith('{')).join('\n')}${s.stderr}`);
      }
      const unexpected = [...found.keys()].filter((id) => !mustHave.includes(id) && !mayHave.has(id));
      t.same(unexpected, [], 'nothing unexpected is returned');
      for (const id of mayHave) if ((found.get(id)?.length ?? 0) > 1) t.fail(`${id} returned twice`);
      const corrupt = returned.filter((x) => !intact(x));
      t.same(
        corrupt.map((x) => JSON.stringify(x).slice(0, 300)),
        [],
        `no corrupted event among the ${returned.length} returned`,
      );
      // Returned events of the original segments are identical to their pristine form, @id included.
      const pristineLines = new Set(pristineSegs.flatMap((s) => s.events.map((x) => JSON.stringify(x))));
      const changed = returned.filter((x) => !after.includes(String(x.tid)) && !pristineLines.has(JSON.stringify(x)));
      t.same(changed.map((x) => JSON.stringify(x).slice(0, 300)), [], 'and identical to what inspect showed before the damage');
      t.comment(`${mustHave.length} events in intact blocks, ${mayHave.size} in damaged ones (${[...mayHave].filter((id) => found.has(id)).length} of those still returned)`);
    });
  }
});
