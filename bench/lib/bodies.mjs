/**
 * Pre-built ingest request bodies: a pool of N batches generated from a dataset before the timed part
 * of a run, so that the load generator spends its CPU on sending, not on generating, stringifying or
 * compressing. Each body is kept as JSON bytes and, when asked, also gzip-compressed (level 6, what
 * shippers such as Vector and Fluent Bit use by default).
 */
import { gzipSync } from 'node:zlib';
import { createDataset, PARSER_OF } from './datasets.mjs';

/** @typedef {import('./datasets.mjs').DatasetName} DatasetName */
/** @typedef {'structured' | 'unstructured'} IngestMode */

/**
 * @typedef {object} PreparedBody
 * @property {Buffer} json the body as sent without compression
 * @property {Buffer | null} gzip the body gzip-compressed, when the pool was built with gzip
 * @property {number} events events in the body
 * @property {number} rawBytes UTF-8 bytes of the events' raw strings (the "raw input" a run counts)
 */

/**
 * @typedef {object} BodyPool
 * @property {PreparedBody[]} bodies
 * @property {string} path the ingest endpoint for the mode
 * @property {number} events total events in the pool
 * @property {number} rawBytes total raw-string bytes in the pool
 * @property {number} jsonBytes total uncompressed body bytes
 * @property {number} gzipBytes total gzip body bytes (0 without gzip)
 * @property {number} buildMs time spent building the pool
 */

export const INGEST_PATHS = Object.freeze({
  structured: '/api/v1/ingest/service-structured',
  unstructured: '/api/v1/ingest/service-unstructured',
});

/** The shipping hosts a pool's bodies rotate through: a few datasources per dataset, as in a small fleet. */
const SHIPPER_HOSTS = ['web-01', 'web-02', 'web-03', 'web-04'];

/**
 * @param {object} o
 * @param {DatasetName} o.dataset
 * @param {IngestMode} o.mode
 * @param {number} o.seed
 * @param {number} o.batch events per body
 * @param {number} o.poolEvents events to generate in all (rounded up to whole bodies)
 * @param {number} o.minBodies at least this many distinct bodies
 * @param {number} o.maxPoolBytes stop adding bodies past this many uncompressed bytes (memory bound)
 * @param {boolean} o.gzip also build gzip versions
 * @param {boolean} o.attributes structured mode: send the parsed attributes with each raw string
 * @returns {BodyPool}
 */
export function buildBodyPool(o) {
  const t0 = performance.now();
  const next = createDataset(o.dataset, o.seed);
  const wanted = Math.max(o.minBodies, Math.ceil(o.poolEvents / o.batch));
  /** @type {PreparedBody[]} */
  const bodies = [];
  let jsonBytes = 0;
  let gzipBytes = 0;
  let events = 0;
  let rawBytes = 0;
  for (let i = 0; i < wanted; i++) {
    if (i >= o.minBodies && jsonBytes >= o.maxPoolBytes) break;
    const host = /** @type {string} */ (SHIPPER_HOSTS[i % SHIPPER_HOSTS.length]);
    let raw = 0;
    /** @type {unknown} */
    let doc;
    if (o.mode === 'structured') {
      const evs = new Array(o.batch);
      for (let j = 0; j < o.batch; j++) {
        const e = next();
        raw += Buffer.byteLength(e.rawstring);
        evs[j] = o.attributes ? { timestamp: e.timestamp, attributes: e.attributes, rawstring: e.rawstring } : { timestamp: e.timestamp, rawstring: e.rawstring };
      }
      doc = [{ tags: { host, source: o.dataset }, events: evs }];
    } else {
      const messages = new Array(o.batch);
      for (let j = 0; j < o.batch; j++) {
        const e = next();
        raw += Buffer.byteLength(e.rawstring);
        messages[j] = e.rawstring;
      }
      doc = [{ type: PARSER_OF[o.dataset], fields: { host }, messages }];
    }
    const json = Buffer.from(JSON.stringify(doc));
    const gz = o.gzip ? gzipSync(json, { level: 6 }) : null;
    bodies.push({ json, gzip: gz, events: o.batch, rawBytes: raw });
    jsonBytes += json.length;
    gzipBytes += gz === null ? 0 : gz.length;
    events += o.batch;
    rawBytes += raw;
  }
  return { bodies, path: INGEST_PATHS[o.mode], events, rawBytes, jsonBytes, gzipBytes, buildMs: performance.now() - t0 };
}
