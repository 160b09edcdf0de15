/**
 * Outbound HTTP for actions, and the home of undici in src/. Every connection goes through the
 * target policy (resolved and checked address, see target-policy.ts); redirects are never
 * followed (a 3xx is a failure naming where it pointed, so a redirect cannot lead past the
 * policy); each call is bounded by the caller's signal (the action timeout); at most
 * `maxResponseBytes` of a response are read.
 */
import { isIP } from 'node:net';
import type { Agent, Dispatcher, buildConnector } from 'undici';
import { isLogsvcError } from '../lib/errors.js';
import { DeliveryError, permanent, transient } from './errors.js';
import type { TargetPolicy } from './target-policy.js';

export interface OutboundRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | undefined;
  /** Accept any TLS certificate (the webhook action's ignoreSSL). */
  ignoreTls?: boolean | undefined;
}

export interface OutboundResponse {
  status: number;
  /** The first `maxResponseBytes` of the body, as UTF-8. */
  body: string;
  truncated: boolean;
}

/** Characters of a response body quoted in an error message. */
const QUOTED_BODY_CHARS = 300;

type Undici = typeof import('undici');

function checkedAgent(undici: Undici, policy: TargetPolicy, verifyTls: boolean): Agent {
  const base = undici.buildConnector({ rejectUnauthorized: verifyTls });
  const connect: buildConnector.connector = (opts, callback) => {
    policy.resolve(opts.hostname).then(
      (address) => {
        const bare = opts.hostname.replace(/^\[|\]$/g, '');
        // TLS still verifies the certificate against the name in the URL.
        const servername = opts.servername ?? (isIP(bare) === 0 ? bare : undefined);
        base({ ...opts, hostname: address, ...(servername === undefined ? {} : { servername }) }, callback);
      },
      (err: unknown) => callback(err as Error, null),
    );
  };
  return new undici.Agent({ connect, keepAliveTimeout: 4000 });
}

export class OutboundHttp {
  /** undici and the two agents, loaded at the first delivery: most nodes never send one (idle RSS). */
  private client: Promise<{ undici: Undici; verifying: Agent; lenient: Agent }> | null = null;

  constructor(
    private readonly policy: TargetPolicy,
    private readonly maxResponseBytes: number,
  ) {}

  private agents(): Promise<{ undici: Undici; verifying: Agent; lenient: Agent }> {
    this.client ??= import('undici').then((undici) => ({ undici, verifying: checkedAgent(undici, this.policy, true), lenient: checkedAgent(undici, this.policy, false) }));
    return this.client;
  }

  /** Sends `req`; resolves with a 2xx answer, throws a DeliveryError for anything else. */
  async send(req: OutboundRequest, signal: AbortSignal): Promise<OutboundResponse> {
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      throw permanent('E_VALIDATION', `"${req.url.slice(0, 200)}" is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw permanent('E_VALIDATION', `"${url.protocol}" URLs are not supported; use http or https`);
    const { undici, verifying, lenient } = await this.agents();
    const dispatcher: Dispatcher = req.ignoreTls === true ? lenient : verifying;
    let res: Dispatcher.ResponseData;
    try {
      res = await undici.request(url, { method: req.method as Dispatcher.HttpMethod, headers: req.headers, body: req.body ?? null, dispatcher, signal });
    } catch (err) {
      throw this.failure(err, url, signal);
    }
    const { body, truncated } = await this.read(res, signal, url);
    if (res.statusCode >= 200 && res.statusCode < 300) return { status: res.statusCode, body, truncated };
    if (res.statusCode >= 300 && res.statusCode < 400) {
      const location = String(res.headers.location ?? '(no Location)').slice(0, 200);
      throw permanent('E_TARGET_REFUSED', `${url.host} answered ${res.statusCode} redirecting to ${location}; redirects are not followed`);
    }
    const quoted = body.slice(0, QUOTED_BODY_CHARS).replace(/\s+/g, ' ').trim();
    const message = `${url.host} answered HTTP ${res.statusCode}${quoted === '' ? '' : `: ${quoted}`}`;
    const retry = res.statusCode === 408 || res.statusCode === 429 || res.statusCode >= 500;
    throw new DeliveryError('E_ACTION_FAILED', message, retry);
  }

  /** Reads at most maxResponseBytes, then drops the connection's remaining body. */
  private async read(res: Dispatcher.ResponseData, signal: AbortSignal, url: URL): Promise<{ body: string; truncated: boolean }> {
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    try {
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        const room = this.maxResponseBytes - size;
        if (buf.length > room) {
          if (room > 0) chunks.push(buf.subarray(0, room));
          size += room;
          truncated = true;
          break;
        }
        chunks.push(buf);
        size += buf.length;
      }
    } catch (err) {
      throw this.failure(err, url, signal);
    } finally {
      if (!res.body.destroyed) res.body.destroy();
    }
    return { body: Buffer.concat(chunks, size).toString('utf8'), truncated };
  }

  private failure(err: unknown, url: URL, signal: AbortSignal): DeliveryError {
    if (err instanceof DeliveryError) return err;
    if (isLogsvcError(err)) return permanent(err.code, err.message);
    // The connector's refusal arrives wrapped by undici in some versions.
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof DeliveryError) return cause;
    if (signal.aborted) return transient(`${url.host} did not answer in time (alerts.action_timeout_ms)`);
    const e = err as NodeJS.ErrnoException;
    // undici refusing the request itself (a bad header, method or body): the same next time.
    if (e.code === 'UND_ERR_INVALID_ARG' || e.code === 'UND_ERR_NOT_SUPPORTED') {
      return permanent('E_ACTION_FAILED', `the request to ${url.host} is invalid: ${e.message ?? e.code}`.slice(0, 500));
    }
    // A certificate the node does not trust will not be trusted on the next attempt either.
    if (typeof e.code === 'string' && /CERT|ERR_TLS/.test(e.code)) {
      return permanent('E_ACTION_FAILED', `the TLS certificate of ${url.host} is not trusted (${e.code}); fix the certificate or set ignoreSSL on the webhook`);
    }
    return transient(`calling ${url.host} failed: ${e.code ?? e.name}${e.message === undefined ? '' : ` ${e.message}`}`.slice(0, 500));
  }

  async close(): Promise<void> {
    if (this.client === null) return;
    const { verifying, lenient } = await this.client;
    await Promise.all([verifying.close(), lenient.close()]);
  }
}
