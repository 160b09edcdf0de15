/**
 * The peer benchmark's corpus: the same seeded events (bench/lib/datasets.mjs) cut into the same
 * batches, each batch written once as the body logsvc's structured endpoint takes and once as the
 * JSON lines VictoriaLogs' /insert/jsonline takes. Both body files are generated before anything is
 * timed and cached on disk (keyed by dataset, events, batch and seed), so the load program spends
 * its CPU on sending, and both servers get byte-for-byte the same events in the same batches.
 *
 * Every body carries the raw line and the parsed fields (logsvc: `rawstring` + `attributes`;
 * VictoriaLogs: `_msg` + the same fields flattened), so both stores hold the same information and a
 * free-text search sees the same text on both. A few events carry a rare token (RARE_TOKEN), for the
 * rare-token questions; the corpus counts them.
 *
 * File format: bodies back to back, each a u32 little-endian length and the bytes.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createDataset } from '../lib/datasets.mjs';

/** A token no generator makes: the rare-token questions look for it. */
export const RARE_TOKEN = 'zqxwrare7';
/** Bumped when the bodies change shape, so an old cache is not reused. */
const CORPUS_VERSION = 1;
/** How many events of a corpus carry the rare token. */
const RARE_EVENTS = 7;

/** The shipping hosts the batches rotate through (logsvc tags; VictoriaLogs stream fields). */
const SHIPPERS = ['web-01', 'web-02', 'web-03', 'web-04'];

/**
 * @typedef {object} CorpusManifest
 * @property {number} version
 * @property {string} dataset
 * @property {number} events
 * @property {number} batch
 * @property {number} seed
 * @property {number} bodies
 * @property {number} rareEvents events that hold RARE_TOKEN
 * @property {number[]} rareTimestamps their timestamps (ms)
 * @property {number} minTimestamp ms
 * @property {number} maxTimestamp ms
 * @property {number} rawBytes UTF-8 bytes of every raw line
 * @property {number} logsvcBytes body bytes for logsvc
 * @property {number} vlBytes body bytes for VictoriaLogs
 * @property {string} logsvcFile
 * @property {string} vlFile
 */

/**
 * Flattens nested objects into dotted names (VictoriaLogs does the same with nested JSON; arrays
 * stay JSON text there, so they are sent as JSON text).
 * @param {Record<string, unknown>} obj
 * @param {string} prefix
 * @param {Record<string, unknown>} out
 */
function flatten(obj, prefix, out) {
  for (const [k, v] of Object.entries(obj)) {
    const name = prefix === '' ? k : `${prefix}.${k}`;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flatten(/** @type {Record<string, unknown>} */ (v), name, out);
    else out[name] = Array.isArray(v) ? JSON.stringify(v) : v;
  }
  return out;
}

/**
 * Puts the rare token into an event, in its raw line and in the field that holds it.
 * @param {string} dataset
 * @param {import('../lib/datasets.mjs').BenchEvent} e
 */
function withRareToken(dataset, e) {
  if (dataset === 'accesslog') {
    const attributes = { ...e.attributes, userid: RARE_TOKEN };
    const rawstring = e.rawstring.replace(/^(\S+) - \S+ \[/, `$1 - ${RARE_TOKEN} [`);
    return { ...e, attributes, rawstring };
  }
  const attributes = { ...e.attributes, message: `${String(e.attributes.message ?? '')} ${RARE_TOKEN}` };
  return { ...e, attributes, rawstring: JSON.stringify(attributes) };
}

/**
 * Builds (or finds in the cache) the corpus of one dataset.
 * @param {object} o
 * @param {'accesslog' | 'json'} o.dataset
 * @param {number} o.events
 * @param {number} o.batch events per body
 * @param {number} o.seed
 * @param {string} o.cacheDir
 * @param {(line: string) => void} o.progress
 * @returns {CorpusManifest}
 */
export function ensureCorpus(o) {
  mkdirSync(o.cacheDir, { recursive: true });
  const stem = join(o.cacheDir, `v${CORPUS_VERSION}-${o.dataset}-${o.events}-${o.batch}-${o.seed}`);
  const manifestFile = `${stem}.json`;
  if (existsSync(manifestFile)) {
    const m = /** @type {CorpusManifest} */ (JSON.parse(readFileSync(manifestFile, 'utf8')));
    if (existsSync(m.logsvcFile) && existsSync(m.vlFile)) return m;
  }
  const t0 = performance.now();
  const next = createDataset(o.dataset, o.seed);
  const rareEvery = Math.max(1, Math.floor(o.events / RARE_EVENTS));
  const logsvcFile = `${stem}.logsvc.bodies`;
  const vlFile = `${stem}.vl.bodies`;
  const fdL = openSync(`${logsvcFile}.tmp`, 'w');
  const fdV = openSync(`${vlFile}.tmp`, 'w');
  const head = Buffer.alloc(4);
  /** @param {number} fd @param {Buffer} body */
  const put = (fd, body) => {
    head.writeUInt32LE(body.length, 0);
    writeSync(fd, head);
    writeSync(fd, body);
  };
  let bodies = 0;
  let rawBytes = 0;
  let logsvcBytes = 0;
  let vlBytes = 0;
  let minTimestamp = Number.POSITIVE_INFINITY;
  let maxTimestamp = Number.NEGATIVE_INFINITY;
  /** @type {number[]} */
  const rareTimestamps = [];
  let i = 0;
  try {
    while (i < o.events) {
      const n = Math.min(o.batch, o.events - i);
      const shipper = /** @type {string} */ (SHIPPERS[bodies % SHIPPERS.length]);
      const events = new Array(n);
      const lines = new Array(n);
      for (let j = 0; j < n; j++, i++) {
        let e = next();
        if (i % rareEvery === Math.floor(rareEvery / 2) && rareTimestamps.length < RARE_EVENTS) {
          e = withRareToken(o.dataset, e);
          rareTimestamps.push(e.timestamp);
        }
        rawBytes += Buffer.byteLength(e.rawstring);
        if (e.timestamp < minTimestamp) minTimestamp = e.timestamp;
        if (e.timestamp > maxTimestamp) maxTimestamp = e.timestamp;
        events[j] = { timestamp: e.timestamp, attributes: e.attributes, rawstring: e.rawstring };
        const line = flatten(e.attributes, '', { _time: new Date(e.timestamp).toISOString(), _msg: e.rawstring, shipper, source: o.dataset });
        lines[j] = JSON.stringify(line);
      }
      const bodyL = Buffer.from(JSON.stringify([{ tags: { host: shipper, source: o.dataset }, events }]));
      const bodyV = Buffer.from(`${lines.join('\n')}\n`);
      put(fdL, bodyL);
      put(fdV, bodyV);
      logsvcBytes += bodyL.length;
      vlBytes += bodyV.length;
      bodies++;
      if (bodies % 500 === 0) o.progress(`[corpus] ${o.dataset}: ${i} / ${o.events} events`);
    }
  } finally {
    closeSync(fdL);
    closeSync(fdV);
  }
  renameSync(`${logsvcFile}.tmp`, logsvcFile);
  renameSync(`${vlFile}.tmp`, vlFile);
  /** @type {CorpusManifest} */
  const m = { version: CORPUS_VERSION, dataset: o.dataset, events: o.events, batch: o.batch, seed: o.seed, bodies, rareEvents: rareTimestamps.length, rareTimestamps, minTimestamp, maxTimestamp, rawBytes, logsvcBytes, vlBytes, logsvcFile, vlFile };
  writeFileSync(manifestFile, JSON.stringify(m));
  o.progress(`[corpus] ${o.dataset}: ${o.events} events in ${bodies} bodies built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return m;
}

/**
 * Reads a body file in order, one body per call (synchronous reads of one body: cheap next to
 * sending it). Shared by the connections of one load phase.
 */
export class BodyReader {
  /** @param {string} file */
  constructor(file) {
    this.fd = openSync(file, 'r');
    this.pos = 0;
    this.head = Buffer.alloc(4);
  }

  /** @returns {Buffer | null} the next body, or null at the end */
  next() {
    if (readSync(this.fd, this.head, 0, 4, this.pos) < 4) return null;
    const len = this.head.readUInt32LE(0);
    const body = Buffer.allocUnsafe(len);
    let got = 0;
    while (got < len) {
      const n = readSync(this.fd, body, got, len - got, this.pos + 4 + got);
      if (n === 0) throw new Error(`body file truncated at offset ${this.pos}`);
      got += n;
    }
    this.pos += 4 + len;
    return body;
  }

  close() {
    closeSync(this.fd);
  }
}
