/** Validation of sender-supplied tags: names without "#", string values, bounded, "repo" reserved. */
import { LogsvcError } from '../lib/errors.js';
import { MAX_TAG_VALUE_CHARS, MAX_TAGS_PER_EVENT } from './limits.js';

const TAG_NAME = /^[A-Za-z0-9_@.\-]{1,100}$/;

export function readTags(value: unknown, where: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new LogsvcError('E_VALIDATION', `${where}: must be an object of tag names to values`);
  const out: Record<string, string> = {};
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_TAGS_PER_EVENT) throw new LogsvcError('E_VALIDATION', `${where}: more than ${MAX_TAGS_PER_EVENT} tags`);
  for (const [rawName, v] of entries) {
    const name = rawName.startsWith('#') ? rawName.slice(1) : rawName;
    if (!TAG_NAME.test(name)) throw new LogsvcError('E_VALIDATION', `${where}: tag name "${rawName.slice(0, 100)}" must be 1-100 letters, digits, "_", "-", ".", "@"`);
    if (name === 'repo') throw new LogsvcError('E_VALIDATION', `${where}: the tag "repo" is set by the node and cannot be sent`);
    if (name === '__proto__') throw new LogsvcError('E_VALIDATION', `${where}: "__proto__" is not a valid tag name`);
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw new LogsvcError('E_VALIDATION', `${where}.${rawName}: tag values must be strings`);
    const s = String(v);
    if (s.length > MAX_TAG_VALUE_CHARS) throw new LogsvcError('E_VALIDATION', `${where}.${rawName}: tag value longer than ${MAX_TAG_VALUE_CHARS} characters`);
    out[name] = s;
  }
  return out;
}
