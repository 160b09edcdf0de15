/**
 * One TCP connection to a cluster peer, either direction: framing, the hello exchange, the final
 * `close` frame, and the bounds that keep a bad peer from holding memory or a dead one from holding
 * the connection (handshake timeout, idle timeout, write-buffer bound). What the messages mean is
 * the membership's and the RPC channel's business; this class only carries them.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';
import { describeError, LogsvcError } from '../../lib/errors.js';
import { encodeFrame, FrameParser, PROTOCOL_VERSION, type Message } from './frames.js';
import { parseAuth, parseHello, parseMessage, type Auth, type Close, type CloseReason, type Hello, type PeerMessage } from './messages.js';

export interface ConnectionOptions {
  maxFrameBytes: number;
  /** The peer's hello must arrive within this. */
  handshakeTimeoutMs: number;
  /** Nothing received for this long ends the connection (heartbeats keep a live one busy). */
  idleTimeoutMs: number;
  /** Bytes queued for a peer that does not read; past this the connection is ended. */
  maxWriteBufferBytes: number;
  /**
   * The cluster's shared secret: before anything else each side proves it holds it, answering the
   * other's hello nonce with an HMAC (`authMac`); the secret itself never crosses the wire. Null:
   * no authentication (a development cluster on loopback addresses).
   */
  secret: Buffer | null;
}

export interface Refusal {
  reason: CloseReason;
  message: string;
}

export interface ConnectionHandlers {
  /**
   * The peer's hello passed the version and cluster-id checks; return a refusal to end the
   * connection (a final `close` frame says why) or null to accept it.
   */
  onHello(conn: PeerConnection, hello: Hello): Refusal | null;
  /** The hello was accepted: `conn.peer` is set and messages may flow. */
  onReady(conn: PeerConnection): void;
  onMessage(conn: PeerConnection, msg: PeerMessage): void;
  /** A handler threw on a message (a bug on this side): the connection is ended after this. */
  onInternalError(conn: PeerConnection, err: unknown): void;
  /** Called once, whatever ended the connection. `byPeer` holds the peer's close frame if it sent one. */
  onClosed(conn: PeerConnection, why: { local: Refusal | null; byPeer: Refusal | null; error: string | null }): void;
}

export type Direction = 'inbound' | 'outbound';

export class PeerConnection {
  private readonly parser: FrameParser;
  private remote: Hello | null = null;
  /** The peer's hello, passed its checks, while its `auth` is awaited (a cluster with a secret). */
  private unproven: Hello | null = null;
  /** This side's hello as sent: `local` with this connection's own nonce. */
  private readonly sent: Hello & { nonce: Uint8Array };
  private closed = false;
  private localClose: Refusal | null = null;
  private peerClose: Refusal | null = null;
  private error: string | null = null;
  private lastReceived: number;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly socket: Socket,
    readonly direction: Direction,
    private readonly local: Hello,
    private readonly opts: ConnectionOptions,
    private readonly handlers: ConnectionHandlers,
    private readonly now: () => number,
  ) {
    this.parser = new FrameParser(opts.maxFrameBytes);
    this.lastReceived = now();
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => {
      this.error ??= describeError(err);
    });
    socket.on('close', () => this.finish());
    const tick = Math.max(10, Math.min(opts.handshakeTimeoutMs, opts.idleTimeoutMs) / 4);
    this.timer = setInterval(() => this.checkTimeouts(), tick);
    this.timer.unref();
    this.sent = { ...local, nonce: randomBytes(32), ...(opts.secret === null ? {} : { auth: true }) };
    this.send(this.sent);
  }

  /** The peer's hello, once received and accepted. */
  get peer(): Hello | null {
    return this.remote;
  }

  get isOpen(): boolean {
    return !this.closed && this.remote !== null;
  }

  get remoteAddress(): string {
    return `${this.socket.remoteAddress ?? '?'}:${this.socket.remotePort ?? '?'}`;
  }

  /** Queues one message; false when the connection is closed. Throws E_PROTOCOL for an oversized one. */
  send(msg: Hello | Auth | PeerMessage): boolean {
    if (this.closed || this.socket.destroyed) return false;
    this.socket.write(encodeFrame(msg, this.opts.maxFrameBytes));
    if (this.socket.writableLength > this.opts.maxWriteBufferBytes) {
      this.close('overloaded', `peer is not reading: ${this.socket.writableLength} bytes queued`);
      return false;
    }
    return true;
  }

  /** Ends the connection, telling the peer why in a final frame. */
  close(reason: CloseReason, message: string): void {
    if (this.closed) return;
    this.localClose = { reason, message };
    if (!this.socket.destroyed) {
      try {
        const bye: Close = { t: 'close', reason, message: message.slice(0, 1000) };
        this.socket.write(encodeFrame(bye, this.opts.maxFrameBytes));
      } catch {
        // the close frame is best effort
      }
      this.socket.end();
      // A peer that never reads would keep a half-closed socket forever.
      setTimeout(() => this.socket.destroy(), 1000).unref();
    }
    this.finish();
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    this.lastReceived = this.now();
    let msgs: Message[];
    try {
      msgs = this.parser.push(chunk);
    } catch (err) {
      this.close('protocol-error', describeError(err));
      return;
    }
    for (const m of msgs) {
      if (this.closed) return;
      try {
        this.dispatch(m);
      } catch (err) {
        // Whatever went wrong, it ends this connection only, never the process.
        if (err instanceof LogsvcError && err.code === 'E_PROTOCOL') this.close('protocol-error', err.message);
        else {
          this.error = `handling a "${m.t.slice(0, 40)}" message failed: ${describeError(err)}`;
          this.handlers.onInternalError(this, err);
          this.close('protocol-error', 'internal error handling a message');
        }
      }
    }
  }

  private dispatch(m: Message): void {
    if (this.remote === null) {
      if (m.t === 'close') {
        const c = parseMessage(m) as { reason: CloseReason; message: string };
        this.peerClose = { reason: c.reason, message: c.message };
        this.socket.destroy();
        this.finish();
        return;
      }
      // The version is checked before the rest: another version's hello may carry other fields.
      if (m.t === 'hello' && typeof m.version === 'number' && m.version !== PROTOCOL_VERSION) {
        this.close('protocol-version', `protocol version ${m.version} is not ours (${PROTOCOL_VERSION})`);
        return;
      }
      if (this.unproven !== null) {
        this.checkAuth(this.unproven, parseAuth(m));
        return;
      }
      const hello = parseHello(m);
      const refusal = checkHello(this.local, hello);
      if (refusal !== null) {
        this.close(refusal.reason, refusal.message);
        return;
      }
      const secret = this.opts.secret;
      if (secret === null) {
        if (hello.auth === true) this.close('auth', 'the peer authenticates with a cluster secret and this node has none; set the same [cluster] secret on every node');
        else this.accept(hello);
        return;
      }
      if (hello.auth !== true || hello.nonce === undefined) {
        this.close('auth', 'the peer has no cluster secret (or is a build without cluster authentication); set the same [cluster] secret on every node');
        return;
      }
      // Prove the secret to the peer, then wait for its proof before anything else.
      this.unproven = hello;
      this.send({ t: 'auth', mac: authMac(secret, this.direction, this.local.clusterId, this.local.nodeId, hello.nonce, this.sent.nonce) });
      return;
    }
    if (m.t === 'auth') {
      // Only a peer with a secret sends one unasked; this node has none (it accepted without).
      this.close('auth', 'the peer authenticates with a cluster secret and this node has none; set the same [cluster] secret on every node');
      return;
    }
    const msg = parseMessage(m);
    if (msg.t === 'close') {
      this.peerClose = { reason: msg.reason, message: msg.message };
      this.socket.destroy();
      this.finish();
      return;
    }
    this.handlers.onMessage(this, msg);
  }

  /** The peer's proof: the HMAC of this side's nonce under the secret, as the peer's direction makes it. */
  private checkAuth(hello: Hello, auth: Auth): void {
    const want = authMac(this.opts.secret!, this.direction === 'inbound' ? 'outbound' : 'inbound', this.local.clusterId, hello.nodeId, this.sent.nonce, hello.nonce!);
    if (auth.mac.byteLength !== want.byteLength || !timingSafeEqual(auth.mac, want)) {
      this.close('auth', `authentication failed: the peer (calling itself node ${hello.nodeId}) did not prove this cluster's secret (a different [cluster] secret?)`);
      return;
    }
    this.unproven = null;
    this.accept(hello);
  }

  private accept(hello: Hello): void {
    const refusal = this.handlers.onHello(this, hello);
    if (refusal !== null) {
      this.close(refusal.reason, refusal.message);
      return;
    }
    this.remote = hello;
    this.handlers.onReady(this);
  }

  private checkTimeouts(): void {
    const idle = this.now() - this.lastReceived;
    if (this.remote === null && idle > this.opts.handshakeTimeoutMs) this.close('timeout', `no hello within ${this.opts.handshakeTimeoutMs} ms`);
    else if (idle > this.opts.idleTimeoutMs) this.close('timeout', `nothing received for ${Math.round(idle)} ms`);
  }

  private finish(): void {
    clearInterval(this.timer);
    if (this.closed) {
      return;
    }
    this.closed = true;
    if (!this.socket.destroyed && this.localClose === null) this.socket.destroy();
    this.handlers.onClosed(this, { local: this.localClose, byPeer: this.peerClose, error: this.error });
  }
}

/** The checks every connection makes whoever the peer is: same protocol version, same cluster. */
export function checkHello(local: Hello, remote: Hello): Refusal | null {
  if (remote.version !== PROTOCOL_VERSION) {
    return { reason: 'protocol-version', message: `protocol version ${remote.version} is not ours (${PROTOCOL_VERSION})` };
  }
  if (remote.clusterId !== local.clusterId) {
    return { reason: 'cluster-id', message: `cluster id "${remote.clusterId}" is not ours ("${local.clusterId}")` };
  }
  return null;
}

/**
 * A side's proof that it holds the cluster secret: HMAC-SHA256 over a fixed label, the prover's
 * direction (so a proof cannot be reflected back on a connection of the other direction), the
 * cluster id, the prover's node id, the nonce it was challenged with and its own nonce (so every
 * connection needs a new proof).
 */
export function authMac(secret: Buffer, direction: Direction, clusterId: string, nodeId: number, challenge: Uint8Array, own: Uint8Array): Buffer {
  return createHmac('sha256', secret)
    .update(`logsvc-cluster-auth-1\0${direction}\0${clusterId}\0${nodeId}\0`)
    .update(challenge)
    .update(own)
    .digest();
}
