/**
 * The alert scheduler of a node that runs alerts (alerts.enabled): evaluation, action delivery over
 * HTTP and SMTP, and re-ingest into a repository. Definitions live in global state; the lowest-
 * numbered live node that runs alerts evaluates them, so a cluster evaluates each alert once.
 */
import type { NodeConfig } from '../config/index.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { GlobalStore } from '../global/index.js';
import type { ClusterService } from '../cluster/cluster-service.js';
import type { IngestService } from '../ingest/index.js';
import type { IngestLimits } from '../ingest/limits.js';
import { CustomParsers } from '../ingest/custom-parsing.js';
import type { ParserService } from '../parsers/index.js';
import type { QueryService } from '../query/index.js';
import type { NodeMetrics } from '../metrics/prometheus.js';
import { ActionDispatcher, AlertScheduler, isAlertRunner, OutboundHttp, SmtpMailer, TargetPolicy, type ActionService } from '../alerts/index.js';
import { stopStep, type StopStep } from './stop.js';

export interface AlertingDeps {
  alerts: NodeConfig['alerts'];
  selfId: number;
  /** This node's external URL, for {url} in messages. */
  baseUrl: string;
  store: GlobalStore;
  cluster: ClusterService;
  queries: QueryService;
  actions: ActionService;
  ingest: IngestService;
  ingestLimits: IngestLimits;
  parsers: ParserService;
  metrics: NodeMetrics;
  clock: Clock;
  logger: Logger;
}

/** Starts the scheduler; the step returned stops it and closes its HTTP client. */
export function startAlerting(d: AlertingDeps): StopStep {
  const cfg = d.alerts;
  const { store, ingest, ingestLimits, parsers, clock } = d;
  const outbound = new OutboundHttp(new TargetPolicy(cfg.allow_targets), cfg.max_response_bytes);
  const mailer =
    cfg.smtp_host === ''
      ? null
      : new SmtpMailer({
          host: cfg.smtp_host,
          port: cfg.smtp_port,
          secure: cfg.smtp_secure,
          username: cfg.smtp_username,
          password: cfg.smtp_password,
          sender: cfg.smtp_sender,
          timeoutMs: cfg.action_timeout_ms,
        });
  const scheduler = new AlertScheduler({
    store,
    queries: d.queries,
    openAction: (a) => d.actions.open(a),
    dispatcher: new ActionDispatcher({
      http: outbound,
      mailer,
      state: () => store.state,
      reingest: { admit: () => ingest.admit(), ingest: (repoId, groups, at) => ingest.ingest(repoId, groups, at) },
      ingestLimits,
      customParsers: (repositoryId, parser) => {
        // A token's parser: a list of at most one definition (the shared set is only for untyped unstructured ingest).
        const defs = parsers.defsForIngest(repositoryId, parser, 'raw');
        return !Array.isArray(defs) || defs.length === 0 ? undefined : new CustomParsers(defs, parsers.timeLimits, ingestLimits);
      },
      clock,
      pagerDutyUrl: cfg.pagerduty_url,
      maxMessageBytes: cfg.max_message_bytes,
    }),
    clock,
    logger: d.logger,
    baseUrl: d.baseUrl,
    isRunner: () => isAlertRunner(d.selfId, d.cluster.nodes(), store.state.alerting),
    metrics: d.metrics,
    settings: {
      intervalMs: cfg.evaluate_interval_ms,
      maxConcurrent: cfg.max_concurrent_evaluations,
      maxConcurrentDeliveries: cfg.max_concurrent_deliveries,
      queryTimeoutMs: cfg.query_timeout_ms,
      maxMessageEvents: cfg.max_message_events,
      retry: { retries: cfg.action_retries, backoffMs: cfg.retry_backoff_ms, timeoutMs: cfg.action_timeout_ms },
    },
  });
  scheduler.start();
  return stopStep('alert scheduler', async () => {
    await scheduler.stop();
    await outbound.close();
  });
}
