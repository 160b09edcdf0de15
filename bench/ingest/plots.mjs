/**
 * The ingest benchmark's HTML report: per dataset, throughput, acknowledgement latency (p50, p99),
 * server CPU and RSS over time, the node and the parse-only limit side by side (same bodies, same
 * run), with the run's summary text.
 */
import { htmlReport, lineChart } from '../lib/plot.mjs';

/**
 * @typedef {{ t: number, events: number, p50: number | null, p99: number | null, cpuCores: number | null, rssBytes: number | null }} Second
 */

/**
 * @param {{ date: string, command: string, machine: Record<string, unknown>, results: { dataset: string, target: string, timeline?: Second[] }[], summaryText: string }} r
 */
export function ingestReport(r) {
  const datasets = [...new Set(r.results.map((x) => x.dataset))];
  const sections = datasets.map((dataset) => {
    const phases = r.results.filter((x) => x.dataset === dataset && x.timeline !== undefined && x.timeline.length > 0);
    const len = Math.max(0, ...phases.map((p) => p.timeline?.length ?? 0));
    const x = Array.from({ length: len }, (_, i) => i + 1);
    /** @param {(s: Second) => number | null} pick */
    const series = (pick) => phases.map((p) => ({ name: p.target, values: x.map((_, i) => { const s = p.timeline?.[i]; return s === undefined ? null : pick(s); }) }));
    return {
      heading: dataset,
      charts: [
        lineChart({ title: `${dataset}: throughput`, yLabel: 'events/s', x, series: series((s) => s.events) }),
        lineChart({ title: `${dataset}: acknowledgement latency`, yLabel: 'ms', x, series: [...series((s) => s.p99).map((s) => ({ ...s, name: `${s.name} p99` })), ...series((s) => s.p50).map((s) => ({ ...s, name: `${s.name} p50` }))] }),
        lineChart({ title: `${dataset}: server CPU`, yLabel: 'cores busy', x, series: series((s) => s.cpuCores) }),
        lineChart({ title: `${dataset}: server RSS`, yLabel: 'MB', x, series: series((s) => (s.rssBytes === null ? null : s.rssBytes / 1e6)) }),
      ],
    };
  });
  return htmlReport({
    title: `logsvc ingest benchmark ${r.date}`,
    header: `${r.command}\n${JSON.stringify(r.machine)}\n\n${r.summaryText}`,
    sections,
  });
}
