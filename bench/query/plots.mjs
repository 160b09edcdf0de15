/**
 * The query benchmark's HTML report: the corpus ingest over time (events/s, acknowledgement p99,
 * node CPU and RSS), then per question kind the best and median wall time, and the scan rate per
 * core side by side with the machine's limit (LZ4 + indexOf on one core) measured in the same run.
 */
import { barChart, htmlReport, lineChart } from '../lib/plot.mjs';

/**
 * @param {{ date: string, command: string, machine: Record<string, unknown>, ingest: import('./corpus.mjs').IngestResult, queries: import('./queries.mjs').QueryResult[], limits: import('./limits.mjs').LimitsResult | null, summaryText: string }} r
 */
export function queryReport(r) {
  const tl = r.ingest.timeline;
  const x = tl.map((p) => Math.round(p.t));
  const names = r.queries.map((q) => q.name);
  return htmlReport({
    title: `logsvc query benchmark ${r.date}`,
    header: `${r.command}\n${JSON.stringify(r.machine)}\n\n${r.summaryText}`,
    sections: [
      {
        heading: 'corpus ingest',
        charts: [
          lineChart({ title: 'ingest throughput', yLabel: 'events/s', x, series: [{ name: 'events/s', values: tl.map((p) => p.events) }] }),
          lineChart({ title: 'acknowledgement latency', yLabel: 'ms', x, series: [{ name: 'p99', values: tl.map((p) => p.p99) }] }),
          lineChart({ title: 'node CPU', yLabel: 'cores busy', x, series: [{ name: 'node', values: tl.map((p) => p.cpuCores) }] }),
          lineChart({ title: 'node RSS', yLabel: 'MB', x, series: [{ name: 'node', values: tl.map((p) => (p.rssBytes === null ? null : p.rssBytes / 1e6)) }] }),
        ],
      },
      {
        heading: 'queries',
        charts: [
          barChart({ title: 'wall time per question kind', yLabel: 'seconds', categories: names, series: [{ name: 'best', values: r.queries.map((q) => q.bestSeconds) }, { name: 'median', values: r.queries.map((q) => q.medianSeconds) }] }),
          barChart({
            title: 'raw MB/s per core: logsvc and the one-core limit',
            yLabel: 'raw MB/s per core',
            categories: names,
            series: [
              { name: 'logsvc', values: r.queries.map((q) => q.rawMBpsPerCore) },
              { name: 'limit (LZ4 + indexOf)', values: r.queries.map(() => r.limits?.scanRawMBps ?? null) },
            ],
          }),
        ],
      },
    ],
  });
}
