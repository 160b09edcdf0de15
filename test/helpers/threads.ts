/** Thread priorities of a process, read from /proc (Linux only; callers check that /proc exists). */
import { readdirSync, readFileSync } from 'node:fs';

/** Nice value (field 19 of /proc/<pid>/task/<tid>/stat) of every thread of process `pid`, by tid. */
export function threadNices(pid: number | 'self' = 'self'): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    // "tid (comm) state ...": comm may hold spaces and parentheses; fields resume after the last ')'.
    out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19 - 3]));
  }
  return out;
}
