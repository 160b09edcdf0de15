/**
 * The `kafka` health check: DOWN when the brokers did not answer the last probe or appends are
 * failing, WARN when the probe was slow or deliveries are piling up, OK otherwise.
 */
import type { CheckResult } from '../health/index.js';
import type { KafkaDigestQueue } from './kafka-queue.js';

export function kafkaHealthCheck(q: KafkaDigestQueue): CheckResult {
  const h = q.health();
  const fields = { brokers: h.brokers, topic: h.topic, 'probe-ms': String(h.probeMs), 'in-flight': String(h.inFlight) };
  if (!h.reachable) return { name: 'kafka', status: 'DOWN', statusMessage: `Kafka is unreachable: ${h.error}`, fields };
  if (h.failingAppends > 0) return { name: 'kafka', status: 'DOWN', statusMessage: `the last ${h.failingAppends} append(s) to Kafka failed: ${h.lastAppendError}`, fields };
  if (h.probeMs > h.slowProbeMs) return { name: 'kafka', status: 'WARN', statusMessage: `Kafka is slow: the last probe took ${h.probeMs} ms (threshold ${h.slowProbeMs} ms)`, fields };
  return { name: 'kafka', status: 'OK', statusMessage: '', fields };
}
