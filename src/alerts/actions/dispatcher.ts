/**
 * ActionDispatcher: one delivery of one action for one trigger, whatever its type, and the retry
 * loop around it. Each attempt gets the action timeout; failures a retry may fix are retried
 * after a backoff that doubles; the caller's signal (the node stopping) ends everything at once.
 */
import { isLogsvcError, LogsvcError } from '../../lib/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { EventGroup } from '../../events/index.js';
import type { GlobalState } from '../../global/index.js';
import type { IngestLimits } from '../../ingest/index.js';
import type { CustomParsers } from '../../ingest/custom-parsing.js';
import { tokenDigest } from '../../auth/index.js';
import type { ActionProperties } from '../action-input.js';
import { DeliveryError, permanent } from '../errors.js';
import type { OutboundHttp, OutboundRequest } from '../outbound-http.js';
import type { Mailer } from '../smtp.js';
import { MessageRenderer, messageTooLarge } from '../template.js';
import type { Invocation, TriggerContext } from '../trigger.js';
import { emailMessage } from './email.js';
import { opsGenieRequest, pagerDutyRequest, slackRequest, victorOpsRequest, webhookRequest } from './http-payloads.js';
import { repositoryActionEvents } from './repository.js';

/** Where the repository action's events go: the ingest path without HTTP. */
export interface Reingest {
  /** Throws when ingest is paused (backpressure). */
  admit(): void;
  ingest(repositoryId: string, groups: EventGroup[], at: number): Promise<void>;
}

export interface DispatcherDeps {
  http: OutboundHttp;
  /** Null when no SMTP server is configured. */
  mailer: Mailer | null;
  state: () => GlobalState;
  reingest: Reingest;
  ingestLimits: IngestLimits;
  /** The repository's custom parsers named `parser` (the ingest pipeline's resolution), or undefined. */
  customParsers: (repositoryId: string, parser: string | null) => CustomParsers | undefined;
  clock: Clock;
  pagerDutyUrl: string;
  maxMessageBytes: number;
}

export interface RetryPolicy {
  retries: number;
  backoffMs: number;
  timeoutMs: number;
}

export interface DeliveryOutcome {
  attempts: number;
  error: DeliveryError | null;
}

/** Longest single wait between attempts, whatever the doubling says. */
const MAX_BACKOFF_MS = 60_000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export class ActionDispatcher {
  constructor(private readonly deps: DispatcherDeps) {}

  /** Delivers with retries; never throws, the outcome says how it went. */
  async deliver(props: ActionProperties, t: TriggerContext, inv: Invocation, policy: RetryPolicy, stop: AbortSignal): Promise<DeliveryOutcome> {
    let attempts = 0;
    for (;;) {
      attempts++;
      const signal = AbortSignal.any([stop, AbortSignal.timeout(policy.timeoutMs)]);
      try {
        await this.once(props, t, inv, signal);
        return { attempts, error: null };
      } catch (err) {
        const error = err instanceof DeliveryError ? err : new DeliveryError(err instanceof LogsvcError ? err.code : 'E_ACTION_FAILED', (err as Error).message, false);
        if (!error.transient || attempts > policy.retries || stop.aborted) return { attempts, error };
        await sleep(Math.min(policy.backoffMs * 2 ** (attempts - 1), MAX_BACKOFF_MS), stop);
        if (stop.aborted) return { attempts, error };
      }
    }
  }

  /** One attempt. */
  async once(props: ActionProperties, t: TriggerContext, inv: Invocation, signal: AbortSignal): Promise<void> {
    switch (props.kind) {
      case 'webhook':
        return this.http(webhookRequest(props, this.renderer(t, inv)), signal);
      case 'slack':
        return this.http(slackRequest(props, this.renderer(t, inv)), signal);
      case 'pagerduty':
        return this.http(pagerDutyRequest(props, this.deps.pagerDutyUrl, t), signal);
      case 'opsgenie':
        return this.http(opsGenieRequest(props, t), signal);
      case 'victorops':
        return this.http(victorOpsRequest(props, t), signal);
      case 'email': {
        if (this.deps.mailer === null) throw permanent('E_NOT_CONFIGURED', 'email actions need an SMTP server: set alerts.smtp_host in the node config');
        const msg = emailMessage(props, this.renderer(t, inv));
        return this.deps.mailer.send(msg, signal);
      }
      case 'repository':
        return this.reingest(props.ingestToken, t, inv);
      default: {
        const never: never = props;
        throw new Error(`unknown action ${JSON.stringify(never)}`);
      }
    }
  }

  /** Renders the templates of one message against alerts.max_message_bytes. */
  private renderer(t: TriggerContext, inv: Invocation): MessageRenderer {
    return new MessageRenderer(t, inv, this.deps.maxMessageBytes);
  }

  private async http(req: OutboundRequest, signal: AbortSignal): Promise<void> {
    // Templates were bounded while rendering; fixed payloads (events as JSON, framing) are checked whole.
    if (req.body !== undefined) {
      const bytes = Buffer.byteLength(req.body, 'utf8');
      if (bytes > this.deps.maxMessageBytes) throw messageTooLarge(bytes, this.deps.maxMessageBytes);
    }
    await this.deps.http.send(req, signal);
  }

  private async reingest(token: string, t: TriggerContext, inv: Invocation): Promise<void> {
    const state = this.deps.state();
    const ref = state.ingestTokensByDigest.get(tokenDigest(token));
    const repo = ref === undefined ? undefined : state.repositories.get(ref.repositoryId);
    const entry = ref === undefined ? undefined : repo?.ingestTokens.get(ref.name);
    if (repo === undefined || entry === undefined) throw permanent('E_ACTION_FAILED', 'the ingest token of this repository action is no longer valid');
    try {
      this.deps.reingest.admit();
    } catch (err) {
      throw new DeliveryError('E_UNAVAILABLE', (err as Error).message, true);
    }
    const now = this.deps.clock.now();
    const groups = repositoryActionEvents(t, inv, entry.parser, now, this.deps.ingestLimits, this.deps.customParsers(repo.id, entry.parser));
    try {
      await this.deps.reingest.ingest(repo.id, groups, now);
    } catch (err) {
      const code = isLogsvcError(err) ? err.code : 'E_ACTION_FAILED';
      throw new DeliveryError(code, `ingesting into repository "${repo.name}" failed: ${(err as Error).message}`, isLogsvcError(err) && err.retriable);
    }
  }
}
