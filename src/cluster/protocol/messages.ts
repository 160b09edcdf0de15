/**
 * The cluster protocol's message types and their checks. A peer is another process that may be of
 * another build or simply buggy, so every field a message carries is checked before use; a message
 * that fails is a protocol violation (E_PROTOCOL) and ends the connection. Documented in
 * docs/cluster-protocol.md; keep the two in step.
 */
import { LogsvcError } from '../../lib/errors.js';
import type { Message } from './frames.js';

/** Both sides send one first, unprompted; nothing else is accepted before the peer's hello. */
export interface Hello {
  t: 'hello';
  version: number;
  clusterId: string;
  nodeId: number;
  uuid: string;
  /** The node's HTTP base URI (what GraphQL shows as `uri`). */
  uri: string;
  /** host:port where the node accepts cluster connections (what others dial). */
  addr: string;
  /** Differs on every start of the node's process. */
  incarnation: number;
  /**
   * Random bytes, new for every connection: the challenge the peer answers with an `auth` message
   * when the cluster has a secret (absent from builds without cluster authentication).
   */
  nonce?: Uint8Array;
  /** True when the sender has a cluster secret and will authenticate (answer with `auth`). */
  auth?: boolean;
}

/**
 * The answer to the peer's hello nonce when the cluster has a secret: HMAC-SHA256 keyed by the
 * secret (connection.ts `authMac`). Both sides send one; nothing else is accepted before it checks.
 */
export interface Auth {
  t: 'auth';
  mac: Uint8Array;
}

/** Why a side ends a connection; sent in a final `close` frame. */
export type CloseReason =
  | 'protocol-version'
  | 'cluster-id'
  | 'auth'
  | 'node-id-conflict'
  | 'self'
  | 'duplicate'
  | 'leaving'
  | 'protocol-error'
  | 'timeout'
  | 'overloaded';

const CLOSE_REASONS: ReadonlySet<string> = new Set<CloseReason>([
  'protocol-version', 'cluster-id', 'auth', 'node-id-conflict', 'self', 'duplicate', 'leaving', 'protocol-error', 'timeout', 'overloaded',
]);

export interface Close {
  t: 'close';
  reason: CloseReason;
  message: string;
}

/** A member as gossiped in heartbeats: enough to dial it and to recognise it. */
export interface MemberInfo {
  id: number;
  uuid: string;
  uri: string;
  addr: string;
}

export interface Heartbeat {
  t: 'hb';
  /** Sender's heartbeat counter (per process run). */
  seq: number;
  /** Sender's wall clock, epoch ms (informational: liveness uses the receiver's clock). */
  at: number;
  /** The sender itself and every member the sender knows, alive or not. */
  members: MemberInfo[];
  /** Opaque application payload (the node's owned partitions, checkpoints...). */
  payload: unknown;
}

/** Errors cross the wire as plain data. */
export interface WireError {
  code: string;
  message: string;
  retriable: boolean;
}

export interface Request {
  t: 'req';
  id: number;
  /** Handler name. */
  type: string;
  body: unknown;
  /** Present for a streamed request: the chunks the responder may send before it gets credit. */
  window?: number;
  /** Caller-chosen idempotency key, handed to the handler; the same on every retry of one operation. */
  key?: string;
}

export interface Response {
  t: 'res';
  id: number;
  body?: unknown;
  error?: WireError;
}

export interface Chunk {
  t: 'chunk';
  id: number;
  body: unknown;
}

export interface End {
  t: 'end';
  id: number;
  error?: WireError;
}

export interface Credit {
  t: 'credit';
  id: number;
  n: number;
}

export interface Cancel {
  t: 'cancel';
  id: number;
}

export type PeerMessage = Heartbeat | Close | Request | Response | Chunk | End | Credit | Cancel;

const MAX_NAME = 256;
const MAX_MEMBERS = 4096;

function bad(what: string): never {
  throw new LogsvcError('E_PROTOCOL', `malformed cluster message: ${what}`);
}
const isId = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isName = (v: unknown): v is string => typeof v === 'string' && v.length <= MAX_NAME;

export function parseHello(m: Message): Hello {
  if (m.t !== 'hello') bad(`expected "hello" first, got "${m.t.slice(0, 40)}"`);
  const { version, clusterId, nodeId, uuid, uri, addr, incarnation } = m;
  if (!isId(version)) bad('hello.version');
  if (!isName(clusterId)) bad('hello.clusterId');
  if (!isId(nodeId)) bad('hello.nodeId');
  if (!isName(uuid)) bad('hello.uuid');
  if (!isName(uri)) bad('hello.uri');
  if (!isName(addr)) bad('hello.addr');
  if (!isId(incarnation)) bad('hello.incarnation');
  const hello: Hello = { t: 'hello', version, clusterId, nodeId, uuid, uri, addr, incarnation };
  if (m.nonce !== undefined && m.nonce !== null) {
    if (!(m.nonce instanceof Uint8Array) || m.nonce.byteLength < 16 || m.nonce.byteLength > 64) bad('hello.nonce');
    hello.nonce = m.nonce;
  }
  if (m.auth === true) hello.auth = true;
  return hello;
}

export function parseAuth(m: Message): Auth {
  if (m.t !== 'auth') bad(`expected "auth" after the hello, got "${m.t.slice(0, 40)}"`);
  if (!(m.mac instanceof Uint8Array) || m.mac.byteLength > 64) bad('auth.mac');
  return { t: 'auth', mac: m.mac };
}

function parseMember(v: unknown): MemberInfo {
  if (typeof v !== 'object' || v === null) bad('hb.members[]');
  const { id, uuid, uri, addr } = v as Record<string, unknown>;
  if (!isId(id) || !isName(uuid) || !isName(uri) || !isName(addr)) bad('hb.members[]');
  return { id, uuid, uri, addr };
}

function parseWireError(v: unknown): WireError {
  if (typeof v !== 'object' || v === null) bad('error');
  const { code, message, retriable } = v as Record<string, unknown>;
  return { code: typeof code === 'string' ? code : 'E_INTERNAL', message: typeof message === 'string' ? message : 'no message', retriable: retriable === true };
}

/** Checks a post-handshake message; unknown types are protocol errors. */
export function parseMessage(m: Message): PeerMessage {
  switch (m.t) {
    case 'hb': {
      if (!isId(m.seq) || typeof m.at !== 'number' || !Array.isArray(m.members) || m.members.length > MAX_MEMBERS) bad('hb');
      return { t: 'hb', seq: m.seq, at: m.at, members: m.members.map(parseMember), payload: m.payload };
    }
    case 'close':
      return {
        t: 'close',
        reason: typeof m.reason === 'string' && CLOSE_REASONS.has(m.reason) ? (m.reason as CloseReason) : 'protocol-error',
        message: typeof m.message === 'string' ? m.message.slice(0, 1000) : '',
      };
    case 'req': {
      if (!isId(m.id) || !isName(m.type)) bad('req');
      const r: Request = { t: 'req', id: m.id, type: m.type, body: m.body };
      if (m.window !== undefined && m.window !== null) {
        if (!isId(m.window) || m.window < 1) bad('req.window');
        r.window = m.window;
      }
      if (m.key !== undefined && m.key !== null) {
        if (!isName(m.key)) bad('req.key');
        r.key = m.key;
      }
      return r;
    }
    case 'res': {
      if (!isId(m.id)) bad('res');
      return m.error !== undefined && m.error !== null ? { t: 'res', id: m.id, error: parseWireError(m.error) } : { t: 'res', id: m.id, body: m.body };
    }
    case 'chunk':
      if (!isId(m.id)) bad('chunk');
      return { t: 'chunk', id: m.id, body: m.body };
    case 'end':
      if (!isId(m.id)) bad('end');
      return m.error !== undefined && m.error !== null ? { t: 'end', id: m.id, error: parseWireError(m.error) } : { t: 'end', id: m.id };
    case 'credit':
      if (!isId(m.id) || !isId(m.n)) bad('credit');
      return { t: 'credit', id: m.id, n: m.n };
    case 'cancel':
      if (!isId(m.id)) bad('cancel');
      return { t: 'cancel', id: m.id };
    default:
      return bad(`unknown message type "${m.t.slice(0, 40)}"`);
  }
}
