/**
 * What the process's resident memory is made of, from /proc/self/status (Linux): anonymous memory
 * (the V8 heaps, malloc, thread stacks: what the node itself holds) and file-backed pages (the
 * node executable's code and data, shared libraries and native modules: shared with every other
 * Node process on the machine and given back by the kernel under pressure). Null where the file
 * does not exist (not Linux). Exposed as `logsvc_process_resident_bytes{kind}` (docs/metrics.md).
 */
import { readFileSync } from 'node:fs';

export interface ResidentMemory {
  anon: number;
  file: number;
  shmem: number;
}

/** Parses the RssAnon, RssFile and RssShmem lines (kB) of a /proc/<pid>/status text; null if absent. */
export function parseResident(status: string): ResidentMemory | null {
  const kb = (name: string): number | null => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status);
    return m === null ? null : Number(m[1]) * 1024;
  };
  const anon = kb('RssAnon');
  const file = kb('RssFile');
  const shmem = kb('RssShmem');
  return anon === null || file === null || shmem === null ? null : { anon, file, shmem };
}

export function residentMemory(): ResidentMemory | null {
  let text: string;
  try {
    text = readFileSync('/proc/self/status', 'utf8');
  } catch {
    return null;
  }
  return parseResident(text);
}
