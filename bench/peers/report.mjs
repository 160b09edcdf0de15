/**
 * The peer benchmark's markdown: ingest, footprint and per-question tables, every number next to
 * its ratio (logsvc / VictoriaLogs) from the same run.
 */

/** @param {number | null | undefined} x @param {number} [d] */
const f = (x, d = 1) => (x === null || x === undefined || !Number.isFinite(x) ? '?' : x.toFixed(d));
/** @param {number | null | undefined} a @param {number | null | undefined} b */
const ratio = (a, b) => (a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? '?' : `${(a / b).toFixed(2)}x`);
/** @param {number | null | undefined} b */
const mb = (b) => (b == null ? '?' : (b / 1e6).toFixed(1));

/**
 * @param {any} r the run's result document
 * @returns {string}
 */
export function markdown(r) {
  const out = [];
  out.push(`Command: \`${r.command}\``, '');
  out.push(`Machine: ${r.machine} (shared by several engineers while it ran). ${r.date}. VictoriaLogs ${r.vlVersion}; logsvc ${r.logsvcVersion}${r.logsvcBuild ? ` (${r.logsvcBuild})` : ''}.`, '');
  out.push('### Ingest', '');
  out.push('| dataset | events | logsvc events/s | VictoriaLogs events/s | ratio | logsvc CPU s / 1M events | VictoriaLogs CPU s / 1M events | ratio |');
  out.push('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const d of r.ingest) {
    out.push(`| ${d.dataset} | ${d.events} | ${f(d.logsvc.eps, 0)} | ${f(d.vl.eps, 0)} | ${ratio(d.logsvc.eps, d.vl.eps)} | ${f(d.logsvc.cpuPerMillion, 2)} | ${f(d.vl.cpuPerMillion, 2)} | ${ratio(d.logsvc.cpuPerMillion, d.vl.cpuPerMillion)} |`);
  }
  const probes = r.ingest.filter((/** @type {any} */ d) => d.fsync !== undefined);
  if (probes.length > 0) {
    const p = (/** @type {any} */ x) => `${f(x.p50Ms, 2)} / ${f(x.p90Ms, 2)}`;
    out.push('', `The disk, fsync of a 256 KiB write in logsvc's data dir, p50 / p90 ms: ${probes.map((/** @type {any} */ d) => `${d.dataset} ${p(d.fsync.before)} before, ${p(d.fsync.after)} after`).join('; ')}.`);
  }
  out.push('', 'logsvc answers each batch once it is fsync-durable in its queue; VictoriaLogs answers /insert/jsonline once the rows are in its in-memory buffers (not fsync-acknowledged; its time includes one /internal/force_flush at the end).', '');
  out.push('### Footprint', '');
  out.push('| what | logsvc | VictoriaLogs | ratio |', '|---|---:|---:|---:|');
  const fp = r.footprint;
  out.push(`| stored bytes (logsvc segments; VictoriaLogs partitions), MB | ${mb(fp.logsvc.storedBytes)} | ${mb(fp.vl.storedBytes)} | ${ratio(fp.logsvc.storedBytes, fp.vl.storedBytes)} |`);
  out.push(`| whole data dir, MB (allocated) | ${mb(fp.logsvc.dirBytes)} | ${mb(fp.vl.dirBytes)} | ${ratio(fp.logsvc.dirBytes, fp.vl.dirBytes)} |`);
  out.push(`| data dir / stored bytes | ${ratio(fp.logsvc.dirBytes, fp.logsvc.storedBytes)} | ${ratio(fp.vl.dirBytes, fp.vl.storedBytes)} | |`);
  out.push(`| RSS idle empty (5 s after start), MB | ${mb(fp.logsvc.rssEmpty)} | ${mb(fp.vl.rssEmpty)} | ${ratio(fp.logsvc.rssEmpty, fp.vl.rssEmpty)} |`);
  if (fp.logsvc.rssEmptyLongIdle !== undefined) out.push(`| RSS idle empty, a further ${r.options.longIdleSeconds} s later, MB | ${mb(fp.logsvc.rssEmptyLongIdle)} | ${mb(fp.vl.rssEmptyLongIdle)} | ${ratio(fp.logsvc.rssEmptyLongIdle, fp.vl.rssEmptyLongIdle)} |`);
  out.push(`| RSS after ingest, MB | ${mb(fp.logsvc.rssAfterIngest)} | ${mb(fp.vl.rssAfterIngest)} | ${ratio(fp.logsvc.rssAfterIngest, fp.vl.rssAfterIngest)} |`);
  out.push(`| RSS idle after restart with data (5 s), MB | ${mb(fp.logsvc.rssAfterRestart)} | ${mb(fp.vl.rssAfterRestart)} | ${ratio(fp.logsvc.rssAfterRestart, fp.vl.rssAfterRestart)} |`);
  if (fp.logsvc.rssAfterRestartLongIdle !== undefined) out.push(`| RSS idle after restart with data, a further ${r.options.longIdleSeconds} s later, MB | ${mb(fp.logsvc.rssAfterRestartLongIdle)} | ${mb(fp.vl.rssAfterRestartLongIdle)} | ${ratio(fp.logsvc.rssAfterRestartLongIdle, fp.vl.rssAfterRestartLongIdle)} |`);
  if (r.questions.some((/** @type {any} */ q) => q.results.length > 0)) out.push(`| RSS after the questions, MB | ${mb(fp.logsvc.rssAfterQueries)} | ${mb(fp.vl.rssAfterQueries)} | ${ratio(fp.logsvc.rssAfterQueries, fp.vl.rssAfterQueries)} |`);
  out.push('');
  for (const d of r.questions.filter((q) => q.results.length > 0)) {
    out.push(`### Questions: ${d.dataset} (${d.events} events)`, '');
    out.push('| question | logsvc ms | VictoriaLogs ms | latency ratio | logsvc CPU ms | VictoriaLogs CPU ms | CPU ratio | answers |');
    out.push('|---|---:|---:|---:|---:|---:|---:|---|');
    for (const q of d.results) {
      out.push(`| ${q.kind} | ${f(q.logsvc.medianMs)} | ${f(q.vl.medianMs)} | ${ratio(q.logsvc.medianMs, q.vl.medianMs)} | ${f(q.logsvc.medianCpuMs)} | ${f(q.vl.medianCpuMs)} | ${ratio(q.logsvc.medianCpuMs, q.vl.medianCpuMs)} | ${q.agree ? 'agree' : `**differ**: ${q.difference}`} |`);
    }
    out.push('');
  }
  out.push('Latency: median of the timed runs after a warm-up, wall time from request to the last byte; CPU: the server process\'s user + system time over the request (/proc/<pid>/stat), median.', '');
  return out.join('\n');
}
