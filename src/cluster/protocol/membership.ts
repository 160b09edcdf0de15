/**
 * Cluster membership: who is in the cluster and who is alive, as this node sees it. It listens for
 * peers, dials the configured peers and every node it learns of through gossip (heartbeats carry the
 * sender's known members), keeps one connection per pair of nodes, reconnects with backoff and
 * jitter, sends heartbeats carrying the node's application payload, and declares a node not alive
 * after `failureTimeoutMs` without one. It is the node's `Liveness` and the carrier of cluster RPC.
 * It reads no configuration: the node passes everything in. Behaviour: docs/cluster-protocol.md.
 */
import { EventEmitter } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import type { Clock } from '../../lib/clock.js';
import { describeError, LogsvcError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import type { Liveness } from '../cluster-service.js';
import { PeerConnection, type ConnectionHandlers, type Refusal } from './connection.js';
import { DEFAULT_MAX_FRAME_BYTES, PROTOCOL_VERSION } from './frames.js';
import type { Hello, Heartbeat, MemberInfo, PeerMessage } from './messages.js';
import { DEFAULT_RPC_LIMITS, RpcChannel, RpcHandlers, type RequestOptions, type StreamHandler, type StreamOptions, type UnaryHandler } from './rpc.js';

export interface MembershipOptions {
  selfId: number;
  selfUuid: string;
  clusterId: string;
  /** This node's HTTP base URI, shown to others. */
  uri: string;
  /** Where to accept cluster connections; port 0 picks a free port. */
  listen: { host: string; port: number };
  /** host:port others should dial to reach this node (default: the listen host and the bound port). */
  advertise?: string;
  /** Other nodes' cluster addresses (host:port) to join through; may include this node's own. */
  peers: readonly string[];
  heartbeatIntervalMs: number;
  failureTimeoutMs: number;
  logger: Logger;
  clock: Clock;
  /** The application payload sent with every heartbeat (owned partitions, checkpoints...). */
  payload?: () => unknown;
  /** First reconnect delay; doubles per failed attempt up to `reconnectMaxMs`, with jitter. */
  reconnectInitialMs?: number;
  reconnectMaxMs?: number;
  maxFrameBytes?: number;
  /** Default timeout of RPC requests. */
  requestTimeoutMs?: number;
  /**
   * The cluster's shared secret: every connection is authenticated by it (connection.ts) before the
   * peer may join, send heartbeats or make requests. Absent or null: no authentication (a
   * development cluster on loopback addresses; the config refuses it elsewhere).
   */
  secret?: Buffer | null;
}

/** One node as this node sees it. */
export interface MemberView {
  id: number;
  uuid: string;
  uri: string;
  /** Cluster address (host:port). */
  addr: string;
  alive: boolean;
  /** Epoch ms when this node last heard from it (self: now), or null if never. */
  lastHeartbeat: number | null;
  /** Its last heartbeat payload (self: the current one), or null. */
  payload: unknown;
}

export interface MembershipEvents {
  /** A node became alive (handshake or heartbeat after being not alive). */
  up: [node: MemberView];
  /**
   * A node stopped being alive: no heartbeat within the failure timeout, it said it was leaving, or
   * it reconnected as a new process run before the timeout ('restarted', followed by 'up').
   */
  down: [node: MemberView, reason: DownReason];
  /** A node's heartbeat payload changed (compared by value). */
  payload: [nodeId: number, payload: unknown];
}

export type DownReason = 'timeout' | 'leaving' | 'restarted';

interface Member {
  id: number;
  incarnation: number;
  uuid: string;
  uri: string;
  addr: string;
  alive: boolean;
  lastHeartbeat: number | null;
  /** Monotonic ms of the last sign of life. */
  lastSeen: number;
  payload: unknown;
  conn: PeerConnection | null;
}

interface DialTarget {
  addr: string;
  configured: boolean;
  attempts: number;
  nextAt: number;
  dialing: boolean;
  /** Learned from the hello of a connection to this address. */
  nodeId: number | null;
  self: boolean;
  lastProblem: string | null;
}

const MAX_UNIDENTIFIED_CONNECTIONS = 256;
const WILDCARD_HOSTS: ReadonlySet<string> = new Set(['0.0.0.0', '::', '[::]', '']);

export class Membership extends EventEmitter<MembershipEvents> implements Liveness {
  /** Calls each listener (raw, so `once` ones go away); a throwing one is logged, stops no other and breaks no connection. */
  private notify<K extends keyof MembershipEvents>(event: K, ...args: MembershipEvents[K]): void {
    for (const listener of this.rawListeners(event) as ((...a: MembershipEvents[K]) => void)[]) {
      try {
        listener(...args);
      } catch (err) {
        this.o.logger.error('cluster membership listener failed', { event, error: describeError(err) });
      }
    }
  }

  private readonly members = new Map<number, Member>();
  private readonly targets = new Map<string, DialTarget>();
  private readonly conns = new Set<PeerConnection>();
  private readonly channels = new Map<PeerConnection, RpcChannel>();
  /** Outbound connections -> the address they dialed. */
  private readonly dialTargets = new Map<PeerConnection, DialTarget>();
  /** Identifies this process run: a peer that sees it change knows the node restarted. */
  private readonly incarnation = Date.now() * 1000 + Math.floor(Math.random() * 1000);
  private readonly rpc = new RpcHandlers();
  private server: Server | null = null;
  private hello: Hello | null = null;
  private timers: NodeJS.Timeout[] = [];
  private seq = 0;
  private stopped = false;
  /** When maintain last ran (monotonic), to tell this node's own stalls (creditOwnStall). */
  private lastMaintainAt: number | null = null;
  private lastPayloadError: string | null = null;
  /** Refusal log lines by kind, and when each was last a warning. */
  private readonly refusalLogged = new Map<string, number>();
  private readonly reconnectInitialMs: number;
  private readonly reconnectMaxMs: number;
  private readonly maxFrameBytes: number;
  /** Connections this node refused because the peer did not prove the cluster secret. */
  private authRefusals = 0;

  constructor(private readonly o: MembershipOptions) {
    super();
    if (!(o.heartbeatIntervalMs > 0) || !(o.failureTimeoutMs > o.heartbeatIntervalMs)) {
      throw new LogsvcError('E_CONFIG_INVALID', `cluster failure timeout (${o.failureTimeoutMs} ms) must exceed the heartbeat interval (${o.heartbeatIntervalMs} ms), which must be positive`);
    }
    if (o.advertise === undefined && WILDCARD_HOSTS.has(o.listen.host)) {
      // Peers gossip the advertised address; a wildcard one would send every node to itself.
      throw new LogsvcError('E_CONFIG_INVALID', `cluster listen host "${o.listen.host}" is not an address other nodes can dial; listen on this host's own address (or give an advertised address)`);
    }
    this.reconnectInitialMs = o.reconnectInitialMs ?? Math.min(200, o.heartbeatIntervalMs);
    this.reconnectMaxMs = Math.max(this.reconnectInitialMs, o.reconnectMaxMs ?? 5000);
    this.maxFrameBytes = o.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    for (const addr of o.peers) this.addTarget(addr, true);
  }

  /** Starts listening and dialing; resolves with the bound cluster address. */
  async start(): Promise<{ host: string; port: number; advertise: string }> {
    if (this.server !== null || this.stopped) throw new Error('membership already started');
    const server = createServer((socket) => this.accept(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.listen.port, this.o.listen.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => this.o.logger.error('cluster listener failed', { error: describeError(err) }));
    const bound = server.address();
    const port = typeof bound === 'object' && bound !== null ? bound.port : this.o.listen.port;
    const advertise = this.o.advertise ?? `${this.o.listen.host}:${port}`;
    this.hello = {
      t: 'hello', version: PROTOCOL_VERSION, clusterId: this.o.clusterId, nodeId: this.o.selfId, uuid: this.o.selfUuid, uri: this.o.uri, addr: advertise, incarnation: this.incarnation,
    };
    const own = this.targets.get(advertise);
    if (own !== undefined) own.self = true;
    this.timers.push(setInterval(() => this.sendHeartbeats(), this.o.heartbeatIntervalMs));
    this.timers.push(setInterval(() => this.maintain(), this.maintainEveryMs()));
    for (const t of this.timers) t.unref();
    this.o.logger.info('cluster membership listening', { addr: advertise, node: this.o.selfId, peers: this.o.peers.join(',') });
    this.maintain();
    return { host: this.o.listen.host, port, advertise };
  }

  /** Tells every peer this node is leaving, closes every connection and the listener. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    const closing = [...this.conns].map((c) => new Promise<void>((resolve) => {
      if (c.socket.destroyed) return resolve();
      c.socket.once('close', () => resolve());
      c.close('leaving', 'node is stopping');
    }));
    const server = this.server;
    const listenerClosed = server === null ? Promise.resolve() : new Promise<void>((resolve) => server.close(() => resolve()));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all([...closing, listenerClosed]), new Promise<void>((r) => (timer = setTimeout(r, 2000)))]);
    clearTimeout(timer);
    for (const c of this.conns) c.socket.destroy();
  }

  // ---- Liveness ----

  isAlive(nodeId: number): boolean {
    if (nodeId === this.o.selfId) return !this.stopped;
    return this.members.get(nodeId)?.alive === true;
  }

  lastHeartbeat(nodeId: number): number | null {
    if (nodeId === this.o.selfId) return this.o.clock.now();
    return this.members.get(nodeId)?.lastHeartbeat ?? null;
  }

  /** Every node this one knows, itself included, by id. */
  view(): MemberView[] {
    const self: MemberView = {
      id: this.o.selfId,
      uuid: this.o.selfUuid,
      uri: this.o.uri,
      addr: this.hello?.addr ?? `${this.o.listen.host}:${this.o.listen.port}`,
      alive: !this.stopped,
      lastHeartbeat: this.o.clock.now(),
      payload: this.currentPayload(),
    };
    return [self, ...[...this.members.values()].map(toView)].sort((a, b) => a.id - b.id);
  }

  /** Ids of the nodes alive now, this one included. */
  aliveIds(): Set<number> {
    const out = new Set<number>(this.stopped ? [] : [this.o.selfId]);
    for (const m of this.members.values()) if (m.alive) out.add(m.id);
    return out;
  }

  payloadOf(nodeId: number): unknown {
    if (nodeId === this.o.selfId) return this.currentPayload();
    return this.members.get(nodeId)?.payload ?? null;
  }

  /** How many connections this node refused because the peer did not prove the cluster secret. */
  get authFailures(): number {
    return this.authRefusals;
  }

  /** Open connections by peer (diagnostics: at most one per peer once duplicates resolve). */
  connections(): { nodeId: number; direction: 'inbound' | 'outbound' }[] {
    const out: { nodeId: number; direction: 'inbound' | 'outbound' }[] = [];
    for (const c of this.conns) if (c.isOpen) out.push({ nodeId: c.peer!.nodeId, direction: c.direction });
    return out.sort((a, b) => a.nodeId - b.nodeId);
  }

  // ---- RPC ----

  handle(type: string, fn: UnaryHandler): void {
    this.rpc.handle(type, fn);
  }

  handleStream(type: string, fn: StreamHandler): void {
    this.rpc.handleStream(type, fn);
  }

  /** One request to `nodeId`; fails E_UNAVAILABLE (retriable) when there is no connection to it. */
  request(nodeId: number, type: string, body: unknown, opts?: RequestOptions): Promise<unknown> {
    const ch = this.channelTo(nodeId);
    if (ch instanceof LogsvcError) return Promise.reject(ch);
    return ch.request(type, body, opts);
  }

  /** A streamed request to `nodeId`: iterate its chunks; an error ends the iteration with a throw. */
  stream(nodeId: number, type: string, body: unknown, opts?: StreamOptions): AsyncIterableIterator<unknown> {
    const ch = this.channelTo(nodeId);
    if (ch instanceof LogsvcError) {
      return (async function* failed(): AsyncGenerator<unknown> {
        yield* [];
        throw ch;
      })();
    }
    return ch.stream(type, body, opts);
  }

  private channelTo(nodeId: number): RpcChannel | LogsvcError {
    const conn = this.members.get(nodeId)?.conn;
    const ch = conn?.isOpen === true ? this.channels.get(conn) : undefined;
    return ch ?? new LogsvcError('E_UNAVAILABLE', `cluster node ${nodeId} is not connected`);
  }

  // ---- connections ----

  private readonly handlers: ConnectionHandlers = {
    onHello: (conn, hello) => this.onHello(conn, hello),
    onReady: (conn) => this.onReady(conn),
    onMessage: (conn, msg) => this.onMessage(conn, msg),
    onInternalError: (conn, err) => this.o.logger.error('cluster message handling failed', { node: conn.peer?.nodeId ?? 'unknown', error: describeError(err) }),
    onClosed: (conn, why) => this.onClosed(conn, why),
  };

  private accept(socket: Socket): void {
    if (this.stopped || this.hello === null) {
      socket.destroy();
      return;
    }
    let unidentified = 0;
    for (const c of this.conns) if (c.peer === null) unidentified++;
    if (unidentified >= MAX_UNIDENTIFIED_CONNECTIONS) {
      this.o.logger.warn('cluster connection dropped: too many connections in handshake', { from: `${socket.remoteAddress}:${socket.remotePort}` });
      socket.destroy();
      return;
    }
    this.track(socket, 'inbound', null);
  }

  private track(socket: Socket, direction: 'inbound' | 'outbound', target: DialTarget | null): PeerConnection {
    const conn = new PeerConnection(
      socket,
      direction,
      this.hello!,
      {
        maxFrameBytes: this.maxFrameBytes,
        handshakeTimeoutMs: this.o.failureTimeoutMs,
        idleTimeoutMs: this.o.failureTimeoutMs,
        maxWriteBufferBytes: 4 * this.maxFrameBytes,
        secret: this.o.secret ?? null,
      },
      this.handlers,
      () => this.o.clock.monotonic(),
    );
    this.conns.add(conn);
    if (target !== null) this.dialTargets.set(conn, target);
    return conn;
  }

  private dial(target: DialTarget): void {
    const parsed = parseAddr(target.addr);
    if (parsed === null) {
      target.self = true; // never dialable; reported once
      this.o.logger.warn('cluster peer address is not host:port; ignored', { addr: target.addr });
      return;
    }
    target.dialing = true;
    const socket = connect({ host: parsed.host, port: parsed.port });
    socket.once('connect', () => {
      if (this.stopped) socket.destroy();
    });
    this.track(socket, 'outbound', target);
  }

  private onHello(conn: PeerConnection, hello: Hello): Refusal | null {
    const target = this.dialTargets.get(conn);
    if (target !== undefined) target.nodeId = hello.nodeId;
    if (hello.nodeId === this.o.selfId) {
      if (hello.uuid === this.o.selfUuid) {
        if (target !== undefined) target.self = true;
        return { reason: 'self', message: 'connected to itself' };
      }
      return { reason: 'node-id-conflict', message: `node id ${hello.nodeId} is this node's (uuid ${this.o.selfUuid}), not uuid ${hello.uuid}` };
    }
    const m = this.members.get(hello.nodeId);
    const current = m?.conn;
    if (m === undefined || current === null || current === undefined || !current.isOpen) return null;
    if (m.uuid !== hello.uuid) {
      return { reason: 'node-id-conflict', message: `node id ${hello.nodeId} is already connected as uuid ${m.uuid}, not ${hello.uuid}` };
    }
    // A second connection between the same pair: keep the one dialed by the lower node id, so both
    // sides pick the same one; a redial by the same side replaces the old (it may be half-open).
    const dialer = (c: PeerConnection): number => (c.direction === 'outbound' ? this.o.selfId : hello.nodeId);
    const preferred = Math.min(this.o.selfId, hello.nodeId);
    if (dialer(conn) === dialer(current) || dialer(conn) === preferred) return null;
    return { reason: 'duplicate', message: `node ${hello.nodeId} is already connected` };
  }

  private onReady(conn: PeerConnection): void {
    const hello = conn.peer!;
    const target = this.dialTargets.get(conn);
    if (target !== undefined) {
      target.attempts = 0;
      target.lastProblem = null;
    }
    let m = this.members.get(hello.nodeId);
    const now = this.o.clock.monotonic();
    if (m === undefined) {
      m = { id: hello.nodeId, incarnation: hello.incarnation, uuid: hello.uuid, uri: hello.uri, addr: hello.addr, alive: false, lastHeartbeat: null, lastSeen: now, payload: null, conn: null };
      this.members.set(m.id, m);
    } else {
      if (m.uuid !== hello.uuid) this.o.logger.info('cluster node came back with a new uuid', { node: m.id, was: m.uuid, now: hello.uuid });
      // Restarted within the failure timeout: its in-memory state is gone, so say so as down + up.
      if (m.incarnation !== 0 && m.incarnation !== hello.incarnation) this.markDown(m, 'restarted');
      m.incarnation = hello.incarnation;
    }
    m.uuid = hello.uuid;
    m.uri = hello.uri;
    m.addr = hello.addr;
    this.addTarget(hello.addr, false).nodeId = hello.nodeId;
    const old = m.conn;
    m.conn = conn;
    this.channels.set(conn, new RpcChannel(m.id, (msg) => conn.send(msg), this.rpc, { ...DEFAULT_RPC_LIMITS, defaultTimeoutMs: this.o.requestTimeoutMs ?? DEFAULT_RPC_LIMITS.defaultTimeoutMs }));
    if (old !== null && old !== conn) old.close('duplicate', `replaced by a newer connection to node ${m.id}`);
    this.o.logger.info('cluster peer connected', { node: m.id, addr: hello.addr, direction: conn.direction });
    this.heard(m);
    this.sendHeartbeat(conn, this.currentPayload());
  }

  private onMessage(conn: PeerConnection, msg: PeerMessage): void {
    switch (msg.t) {
      case 'hb':
        this.onHeartbeat(conn, msg);
        return;
      case 'close':
        return; // handled by the connection
      case 'req':
      case 'res':
      case 'chunk':
      case 'end':
      case 'credit':
      case 'cancel':
        this.channels.get(conn)?.onMessage(msg);
        return;
    }
  }

  private onHeartbeat(conn: PeerConnection, hb: Heartbeat): void {
    const m = this.members.get(conn.peer!.nodeId);
    if (m === undefined) return;
    this.heard(m);
    if (!isDeepStrictEqual(m.payload, hb.payload)) {
      m.payload = hb.payload;
      this.notify('payload', m.id, hb.payload);
    }
    for (const info of hb.members) this.learn(info);
  }

  /** A member gossiped by a peer: new ones are added (not alive until heard from) and dialed. */
  private learn(info: MemberInfo): void {
    if (info.id === this.o.selfId) return;
    const m = this.members.get(info.id);
    if (m === undefined) {
      this.members.set(info.id, { ...info, incarnation: 0, alive: false, lastHeartbeat: null, lastSeen: 0, payload: null, conn: null });
      this.addTarget(info.addr, false).nodeId = info.id;
      this.o.logger.info('cluster node learned from gossip', { node: info.id, addr: info.addr });
    } else if (m.conn === null && !m.alive && (m.addr !== info.addr || m.uuid !== info.uuid)) {
      // A direct hello is authoritative; gossip only updates nodes this one cannot reach.
      m.addr = info.addr;
      m.uri = info.uri;
      m.uuid = info.uuid;
      this.addTarget(info.addr, false).nodeId = info.id;
    }
  }

  private heard(m: Member): void {
    m.lastSeen = this.o.clock.monotonic();
    m.lastHeartbeat = this.o.clock.now();
    if (!m.alive) {
      m.alive = true;
      this.o.logger.info('cluster node is alive', { node: m.id });
      this.notify('up', toView(m));
    }
  }

  private markDown(m: Member, reason: DownReason): void {
    if (!m.alive) return;
    m.alive = false;
    this.o.logger.warn('cluster node is not alive', { node: m.id, reason, lastHeartbeat: m.lastHeartbeat === null ? 'never' : new Date(m.lastHeartbeat).toISOString() });
    this.notify('down', toView(m), reason);
  }

  private onClosed(conn: PeerConnection, why: { local: Refusal | null; byPeer: Refusal | null; error: string | null }): void {
    this.conns.delete(conn);
    const peer = conn.peer;
    const target = this.dialTargets.get(conn);
    this.dialTargets.delete(conn);
    const reasonText = why.local !== null ? `closed here: ${why.local.reason}: ${why.local.message}` : why.byPeer !== null ? `closed by peer: ${why.byPeer.reason}: ${why.byPeer.message}` : (why.error ?? 'connection closed');
    this.channels.get(conn)?.close(reasonText);
    this.channels.delete(conn);
    if (why.local?.reason === 'auth') this.authRefusals++;
    const refused = why.local ?? why.byPeer;
    const problem = refused !== null && refused.reason !== 'self' && refused.reason !== 'duplicate' && refused.reason !== 'leaving' ? refused : null;
    if (problem !== null && peer === null) {
      // Refusals repeat with every redial: each distinct one is a warning once a minute.
      const key = `${why.local !== null ? 'here' : 'peer'}|${problem.reason}|${problem.message}`;
      const now = this.o.clock.monotonic();
      const last = this.refusalLogged.get(key);
      const fields = { addr: target?.addr ?? conn.remoteAddress, direction: conn.direction, reason: problem.reason, detail: problem.message };
      const msg = why.local !== null ? 'cluster peer refused' : 'cluster peer refused this node';
      if (last === undefined || now - last > 60_000) {
        if (this.refusalLogged.size > 1000) this.refusalLogged.clear();
        this.refusalLogged.set(key, now);
        this.o.logger.warn(msg, fields);
      } else this.o.logger.debug(msg, fields);
    }
    if (peer !== null) {
      const m = this.members.get(peer.nodeId);
      if (m !== undefined && m.conn === conn) {
        m.conn = null;
        if (!this.stopped) this.o.logger.info('cluster peer disconnected', { node: m.id, reason: reasonText });
        if (why.byPeer?.reason === 'leaving') this.markDown(m, 'leaving');
      }
    }
    if (target !== undefined) {
      target.dialing = false;
      const established = peer !== null && why.local?.reason !== 'self';
      if (problem !== null || !established) {
        const text = problem !== null ? `${problem.reason}: ${problem.message}` : (why.error ?? reasonText);
        if (problem === null && text !== target.lastProblem) this.o.logger.debug('cluster dial failed', { addr: target.addr, error: text });
        target.lastProblem = text;
        target.attempts++;
      } else target.attempts = 0;
      target.nextAt = this.o.clock.monotonic() + this.backoff(target.attempts);
    }
  }

  // ---- timers ----

  private maintainEveryMs(): number {
    return Math.max(10, Math.min(this.o.heartbeatIntervalMs, this.o.failureTimeoutMs / 4));
  }

  /**
   * Time this node's own timers ran late (its event loop stalled: a long GC, a starved process) is
   * not counted against its peers: their heartbeats wait unread in its sockets, and this timer runs
   * before they are read. Each alive peer's last sighting moves forward by the lateness past one
   * heartbeat interval. Without it a node waking from a 2 s stall marked every peer down at once and
   * took their digest partitions over. Bounded: a node late on every tick still counts the part of
   * each gap that was not late, so a dead peer is found within a few intervals more.
   */
  private creditOwnStall(now: number): void {
    const prev = this.lastMaintainAt;
    this.lastMaintainAt = now;
    if (prev === null) return;
    const late = now - prev - this.maintainEveryMs();
    if (late <= this.o.heartbeatIntervalMs) return;
    for (const m of this.members.values()) if (m.alive) m.lastSeen = Math.min(now, m.lastSeen + late);
    if (late >= this.o.failureTimeoutMs / 2) this.o.logger.info('cluster: this node stalled; its peers are not judged on the silence', { ms: Math.round(late) });
  }

  private maintain(): void {
    if (this.stopped) return;
    const now = this.o.clock.monotonic();
    this.creditOwnStall(now);
    for (const m of this.members.values()) {
      if (m.alive && now - m.lastSeen > this.o.failureTimeoutMs) this.markDown(m, 'timeout');
    }
    for (const [addr, t] of this.targets) {
      if (t.self || t.dialing || now < t.nextAt) continue;
      if (t.nodeId !== null) {
        const m = this.members.get(t.nodeId);
        if (m?.conn?.isOpen === true) continue;
        // A learned address the node no longer uses (it came back elsewhere) is forgotten.
        if (!t.configured && m !== undefined && m.addr !== addr) {
          this.targets.delete(addr);
          continue;
        }
      }
      this.dial(t);
    }
  }

  private sendHeartbeats(): void {
    if (this.stopped) return;
    const payload = this.currentPayload();
    for (const m of this.members.values()) if (m.conn?.isOpen === true) this.sendHeartbeat(m.conn, payload);
  }

  private sendHeartbeat(conn: PeerConnection, payload: unknown): void {
    const members: MemberInfo[] = [{ id: this.o.selfId, uuid: this.o.selfUuid, uri: this.o.uri, addr: this.hello!.addr }];
    for (const m of this.members.values()) members.push({ id: m.id, uuid: m.uuid, uri: m.uri, addr: m.addr });
    const hb: Heartbeat = { t: 'hb', seq: this.seq++, at: this.o.clock.now(), members, payload };
    try {
      conn.send(hb);
    } catch (err) {
      // An oversized payload: send liveness without it rather than go silent.
      this.reportPayloadError(err);
      conn.send({ ...hb, payload: null });
    }
  }

  private currentPayload(): unknown {
    if (this.o.payload === undefined) return null;
    try {
      const p = this.o.payload() ?? null;
      this.lastPayloadError = null;
      return p;
    } catch (err) {
      this.reportPayloadError(err);
      return null;
    }
  }

  private reportPayloadError(err: unknown): void {
    const text = describeError(err);
    if (text !== this.lastPayloadError) this.o.logger.error('cluster heartbeat payload failed; sending heartbeats without it', { error: text });
    this.lastPayloadError = text;
  }

  private addTarget(addr: string, configured: boolean): DialTarget {
    let t = this.targets.get(addr);
    if (t === undefined) {
      t = { addr, configured, attempts: 0, nextAt: 0, dialing: false, nodeId: null, self: this.hello?.addr === addr, lastProblem: null };
      this.targets.set(addr, t);
    }
    return t;
  }

  private backoff(attempts: number): number {
    const base = Math.min(this.reconnectMaxMs, this.reconnectInitialMs * 2 ** Math.min(attempts, 20));
    return base * (0.5 + Math.random() * 0.5);
  }
}

function toView(m: Member): MemberView {
  return { id: m.id, uuid: m.uuid, uri: m.uri, addr: m.addr, alive: m.alive, lastHeartbeat: m.lastHeartbeat, payload: m.payload };
}

/** "host:port" or "[v6]:port" -> parts, or null. */
export function parseAddr(addr: string): { host: string; port: number } | null {
  const m = /^(?:\[([^\]]+)\]|([^:\s]+)):(\d{1,5})$/.exec(addr.trim());
  if (m === null) return null;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return null;
  return { host: (m[1] ?? m[2])!, port };
}
