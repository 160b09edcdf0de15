/**
 * Custom parsers and the datasource limit: `fieldsToTag` and `#name` fields make tag sets, so a
 * parser can ask for more new datasources than the repository has room for
 * (ingest.max_datasources_per_repository). Rather than failing the whole request, the worker keeps
 * parser tags for as many new tag sets as there is room and stores the other events under the
 * tags they would have had without the parser's (the sender's tags and #type), marked with
 * `@error`. It needs the repository's datasource ids: the node keeps them as one
 * SharedArrayBuffer per repository and size, so a task shares them instead of copying.
 */
import { datasourceId, type EventGroup } from '../events/index.js';

export interface DatasourceRoom {
  /** ingest.max_datasources_per_repository (for the message). */
  limit: number;
  /** New datasources the repository may still get. */
  room: number;
  /** The repository's datasource ids, UTF-8, joined by "\n". */
  existing: SharedArrayBuffer;
}

export function encodeDatasourceIds(ids: Iterable<string>): SharedArrayBuffer {
  const bytes = Buffer.from([...ids].join('\n'), 'utf8');
  const sab = new SharedArrayBuffer(bytes.length);
  new Uint8Array(sab).set(bytes);
  return sab;
}

function decodeDatasourceIds(sab: SharedArrayBuffer): Set<string> {
  const copy = new Uint8Array(sab.byteLength);
  copy.set(new Uint8Array(sab));
  const text = Buffer.from(copy.buffer).toString('utf8');
  return new Set(text === '' ? [] : text.split('\n'));
}

/** A group of parser output, with the tags each event would have had without the parser's. */
export interface ParsedGroup extends EventGroup {
  fallbackTags: Record<string, string>[];
}

const isParsed = (g: EventGroup): g is ParsedGroup => Array.isArray((g as Partial<ParsedGroup>).fallbackTags);

const sortedKey = (tags: Record<string, string>): string => JSON.stringify(Object.entries(tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/**
 * The groups to store: parser tag sets within the room keep their tags, the others fall back.
 * Groups the sender's tags alone define (no parser) are counted first. When not every parser tag
 * set fits, room is first set aside for the fallback tag sets (they are new datasources too), then
 * parser tag sets take what is left in order. What still does not fit (the sender's own tags) is
 * left for the node's own check to refuse, as before.
 */
export function fitDatasources(groups: readonly EventGroup[], repositoryId: string, r: DatasourceRoom): EventGroup[] {
  // Far from the limit (the usual case) every tag set fits, even if all were new: no ids to read.
  if (groups.length <= r.room) return [...groups];
  const existing = decodeDatasourceIds(r.existing);
  let room = r.room;
  const out: EventGroup[] = [];
  const parsed: ParsedGroup[] = [];
  for (const g of groups) {
    if (isParsed(g)) {
      parsed.push(g);
      continue;
    }
    const ds = datasourceId(repositoryId, g.tags);
    if (!existing.has(ds)) {
      existing.add(ds);
      room--;
    }
    out.push(g);
  }
  const newSets = new Set<string>();
  for (const g of parsed) {
    const ds = datasourceId(repositoryId, g.tags);
    if (!existing.has(ds)) newSets.add(ds);
  }
  if (newSets.size <= room) {
    for (const g of parsed) out.push({ tags: g.tags, events: g.events });
    return out;
  }
  const fallbackSets = new Set<string>();
  for (const g of parsed) for (const tags of g.fallbackTags) {
    const ds = datasourceId(repositoryId, tags);
    if (!existing.has(ds)) fallbackSets.add(ds);
  }
  room -= fallbackSets.size;
  const fallback = new Map<string, EventGroup>();
  const why = `the parser's tags were not kept: repository reached its limit of ${r.limit} datasources (ingest.max_datasources_per_repository)`;
  for (const g of parsed) {
    const ds = datasourceId(repositoryId, g.tags);
    if (existing.has(ds) || room > 0) {
      if (!existing.has(ds)) {
        existing.add(ds);
        room--;
      }
      out.push({ tags: g.tags, events: g.events });
      continue;
    }
    g.events.forEach((e, i) => {
      const tags = g.fallbackTags[i]!;
      const key = sortedKey(tags);
      let f = fallback.get(key);
      if (f === undefined) fallback.set(key, (f = { tags, events: [] }));
      e.fields['@error'] = 'true';
      e.fields['@error_msg'] = e.fields['@error_msg'] === undefined ? why : `${e.fields['@error_msg']}; ${why}`;
      f.events.push(e);
    });
  }
  for (const f of fallback.values()) out.push(f);
  return out;
}
