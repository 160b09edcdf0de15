/**
 * Parses a Prometheus text exposition with the reference parser (the `prometheus_client` package
 * from PyPI, run by python3; .ci/run installs it): a parse error fails the test like a scraper
 * would. Returns the samples as name -> [{ labels, value }].
 */
import { spawn } from 'node:child_process';

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

const SCRIPT = `
import sys, json
from prometheus_client.parser import text_string_to_metric_families
out = {}
for fam in text_string_to_metric_families(sys.stdin.read()):
    for s in fam.samples:
        out.setdefault(s.name, []).append({"labels": s.labels, "value": s.value})
json.dump(out, sys.stdout)
`;

export async function parsePrometheus(text: string, timeoutMs = 20_000): Promise<Map<string, Sample[]>> {
  const proc = spawn('python3', ['-c', SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  proc.stdin.end(text);
  const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`prometheus_client could not parse the exposition (exit ${code}): ${stderr}`);
  return new Map(Object.entries(JSON.parse(stdout) as Record<string, Sample[]>));
}

/** The sum of the samples of `name` whose labels include `labels`. */
export function sumOf(samples: Map<string, Sample[]>, name: string, labels: Record<string, string> = {}): number {
  let n = 0;
  for (const s of samples.get(name) ?? []) {
    if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) n += s.value;
  }
  return n;
}
