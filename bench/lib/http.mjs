/**
 * The benchmarks' HTTP client, and their only importer of undici: a Pool of N keep-alive
 * connections with pipelining 1 for the load (each connection carries one request at a time, as a
 * shipper's worker does), and a separate single-connection client for control traffic (GraphQL,
 * metrics) so that it never queues behind the load.
 */
import { Pool } from 'undici';

/** Generous: an ingest answer waits for durability, and a loaded 2-core machine can be slow. */
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * @param {string} origin e.g. http://127.0.0.1:8080
 * @param {number} connections
 * @param {number} [timeoutMs] headers and body timeout of each request
 * @returns {Pool}
 */
export function createLoadPool(origin, connections, timeoutMs = REQUEST_TIMEOUT_MS) {
  return new Pool(origin, {
    connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 600_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: { timeout: 10_000 },
  });
}

/**
 * @param {string} origin
 * @param {number} [timeoutMs] headers and body timeout of each request
 * @returns {Pool}
 */
export function createControlClient(origin) {
  return createLoadPool(origin, 1);
}

/**
 * One POST of a prepared body. Resolves with the status, and the response text only when the status
 * is not 2xx (a success body is drained without decoding: it is `{}`, and decoding costs CPU the
 * generator should not spend).
 * @param {Pool} pool
 * @param {string} path
 * @param {Record<string, string>} headers prepared once per run
 * @param {Buffer} body
 * @returns {Promise<{ status: number, text: string | null }>}
 */
export async function postBody(pool, path, headers, body) {
  const res = await pool.request({ path, method: 'POST', headers, body });
  if (res.statusCode >= 200 && res.statusCode < 300) {
    await res.body.dump();
    return { status: res.statusCode, text: null };
  }
  return { status: res.statusCode, text: await res.body.text() };
}

/**
 * GET a JSON document.
 * @param {Pool} client
 * @param {string} path
 * @param {string | null} token bearer token, if any
 * @returns {Promise<{ status: number, json: unknown, text: string }>}
 */
export async function getJson(client, path, token) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await client.request({ path, method: 'GET', headers });
  const text = await res.body.text();
  let json = null;
  if (res.statusCode === 200) {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  return { status: res.statusCode, json, text };
}

/**
 * A GraphQL operation; throws with the server's words on HTTP or GraphQL errors.
 * @param {Pool} client
 * @param {string} token
 * @param {string} query
 * @returns {Promise<any>} the `data` member
 */
export async function graphql(client, token, query) {
  const res = await client.request({
    path: '/graphql',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query }),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GraphQL request failed with HTTP ${res.statusCode}: ${text.slice(0, 500)}`);
  const doc = JSON.parse(text);
  if (Array.isArray(doc.errors) && doc.errors.length > 0) throw new Error(`GraphQL error: ${doc.errors.map((/** @type {{message: string}} */ e) => e.message).join('; ')}`);
  return doc.data;
}
