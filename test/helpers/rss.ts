/** A node process's resident memory, read from /proc/<pid>/status: now, and the peak while sampled. */
import { readFile } from 'node:fs/promises';

export async function vmRss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (m === null) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}

/** Samples the process's RSS every 20 ms until stopped; resolves with the peak. */
export function sampleRss(pid: number): { stop: () => Promise<number> } {
  let peak = 0;
  let on = true;
  const loop = (async () => {
    while (on) {
      peak = Math.max(peak, await vmRss(pid).catch(() => 0));
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    stop: async () => {
      on = false;
      await loop;
      return peak;
    },
  };
}
