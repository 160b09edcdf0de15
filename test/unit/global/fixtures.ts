/** Shared data for the global-state tests (not a test file itself). */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GlobalEvent, GlobalState } from '../../../src/global/index.js';
import type { Logger } from '../../../src/lib/logger.js';

export async function tempDir(t: { teardown: (fn: () => unknown) => void }, prefix = 'logsvc-global-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export interface CapturedLogger extends Logger {
  lines: { level: string; msg: string; fields: Record<string, unknown> | undefined }[];
}

export function capturingLogger(): CapturedLogger {
  const lines: CapturedLogger['lines'] = [];
  const at =
    (level: string) =>
    (msg: string, fields?: Record<string, unknown>): void => {
      lines.push({ level, msg, fields });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** Realistic millisecond timestamps (above 2^32, so they need more than a u32 in msgpack). */
const T0 = 1_732_147_200_123;

/** One or more events of every type, including removals that must clean up indexes. */
export const ALL_EVENTS: GlobalEvent[] = [
  { type: 'UserAdded', id: 'u1', username: 'alice', isRoot: true, at: T0, fullName: 'Alice Anders', email: 'alice@example.com' },
  { type: 'UserAdded', id: 'u2', username: 'bob', isRoot: false, at: T0 + 1 },
  { type: 'UserAdded', id: 'u3', username: 'carol', isRoot: false, at: T0 + 2, company: 'Carol Co', picture: 'https://img/c.png' },
  { type: 'UserUpdated', id: 'u2', isRoot: true, fields: { fullName: 'Bob Berg', countryCode: 'DK' } },
  { type: 'UserUpdated', id: 'u1', fields: { email: 'alice@new.example.com' } },
  { type: 'UserApiTokenSet', userId: 'u1', digest: 'digest-u1-old', at: T0 + 3 },
  { type: 'UserApiTokenSet', userId: 'u1', digest: 'digest-u1-new', at: T0 + 4 },
  { type: 'UserApiTokenSet', userId: 'u3', digest: 'digest-u3', at: T0 + 5 },
  { type: 'RepositoryCreated', id: 'r1', name: 'web', description: 'web server logs', at: T0 + 10 },
  { type: 'RepositoryCreated', id: 'r2', name: 'db', description: '', at: T0 + 11 },
  { type: 'RepositoryDescriptionSet', id: 'r2', description: 'database logs' },
  { type: 'IngestTokenAdded', repositoryId: 'r1', name: 'default', digest: 'it-r1-default', sealed: 'sealed-1', parser: null, at: T0 + 12 },
  { type: 'IngestTokenAdded', repositoryId: 'r1', name: 'second', digest: 'it-r1-second', sealed: 'sealed-2', parser: 'json', at: T0 + 13 },
  { type: 'IngestTokenAdded', repositoryId: 'r2', name: 'default', digest: 'it-r2-default', sealed: 'sealed-3', parser: null, at: T0 + 14 },
  { type: 'DatasourceCreated', repositoryId: 'r1', id: 'ds-1', tags: { type: 'accesslog', host: 'web-1' }, at: T0 + 15 },
  { type: 'DatasourceCreated', repositoryId: 'r2', id: 'ds-2', tags: {}, at: T0 + 16 },
  { type: 'IngestTokenParserSet', repositoryId: 'r1', name: 'default', parser: 'kv' },
  { type: 'IngestTokenRemoved', repositoryId: 'r1', name: 'second' },
  { type: 'MemberSet', repositoryId: 'r1', userId: 'u2', canAdminMembers: true, canDeleteData: false },
  { type: 'MemberSet', repositoryId: 'r1', userId: 'u3', canAdminMembers: false, canDeleteData: true },
  { type: 'MemberSet', repositoryId: 'r2', userId: 'u3', canAdminMembers: true, canDeleteData: true },
  { type: 'MemberSet', repositoryId: 'r1', userId: 'u1', canAdminMembers: true, canDeleteData: true },
  { type: 'MemberRemoved', repositoryId: 'r1', userId: 'u2' },
  { type: 'UserRemoved', id: 'u3' },
  { type: 'RepositoryDeleted', id: 'r2' },
  { type: 'NodeRegistered', id: 1, uuid: '0b7c9a52-0000-4000-8000-000000000001', name: 'node-1', uri: 'http://10.0.0.1:8080', at: T0 + 20 },
  { type: 'NodeRegistered', id: 2, uuid: '0b7c9a52-0000-4000-8000-000000000002', name: 'node-2', uri: 'http://10.0.0.2:8080', at: T0 + 21 },
  { type: 'PartitionLayoutSet', partitions: [[1, 2], [2, 1], [1], []] },
];

/** The whole model after ALL_EVENTS, indexes included, as plain data (see dump). */
export const EXPECTED_FINAL = {
  seq: ALL_EVENTS.length,
  users: {
    u1: {
      id: 'u1',
      username: 'alice',
      isRoot: true,
      createdAt: T0,
      apiTokenDigest: 'digest-u1-new',
      fullName: 'Alice Anders',
      email: 'alice@new.example.com',
    },
    u2: { id: 'u2', username: 'bob', isRoot: true, createdAt: T0 + 1, apiTokenDigest: null, fullName: 'Bob Berg', countryCode: 'DK' },
  },
  usersByName: { alice: 'u1', bob: 'u2' },
  usersByTokenDigest: { 'digest-u1-new': 'u1' },
  repositories: {
    r1: {
      id: 'r1',
      name: 'web',
      description: 'web server logs',
      createdAt: T0 + 10,
      ingestTokens: {
        default: { repositoryId: 'r1', name: 'default', digest: 'it-r1-default', sealed: 'sealed-1', parser: 'kv', createdAt: T0 + 12 },
      },
      members: { u1: { userId: 'u1', canAdminMembers: true, canDeleteData: true } },
      datasources: { 'ds-1': { id: 'ds-1', tags: { type: 'accesslog', host: 'web-1' }, createdAt: T0 + 15 } },
    },
  },
  repositoriesByName: { web: 'r1' },
  ingestTokensByDigest: { 'it-r1-default': { repositoryId: 'r1', name: 'default' } },
  nodes: {
    '1': { id: 1, uuid: '0b7c9a52-0000-4000-8000-000000000001', name: 'node-1', uri: 'http://10.0.0.1:8080', registeredAt: T0 + 20 },
    '2': { id: 2, uuid: '0b7c9a52-0000-4000-8000-000000000002', name: 'node-2', uri: 'http://10.0.0.2:8080', registeredAt: T0 + 21 },
  },
  partitions: [[1, 2], [2, 1], [1], []],
};

const obj = <V, R>(m: Map<string | number, V>, f: (v: V) => R = (v) => v as unknown as R): Record<string, R> =>
  Object.fromEntries([...m].map(([k, v]) => [String(k), f(v)]));

/** Every part of the state, lookup indexes included, as plain data for deep comparison. */
export function dump(s: GlobalState): typeof EXPECTED_FINAL {
  return {
    seq: s.seq,
    users: obj(s.users, (u) => ({ ...u })),
    usersByName: obj(s.usersByName),
    usersByTokenDigest: obj(s.usersByTokenDigest),
    repositories: obj(s.repositories, (r) => ({
      id: r.id,
      name: r.name,
      description: r.description,
      createdAt: r.createdAt,
      ingestTokens: obj(r.ingestTokens, (x) => ({ ...x })),
      members: obj(r.members, (x) => ({ ...x })),
      datasources: obj(r.datasources, (x) => ({ ...x, tags: { ...x.tags } })),
    })),
    repositoriesByName: obj(s.repositoriesByName),
    ingestTokensByDigest: obj(s.ingestTokensByDigest, (x) => ({ ...x })),
    nodes: obj(s.nodes, (x) => ({ ...x })),
    partitions: s.partitions.map((p) => [...p]),
  } as unknown as typeof EXPECTED_FINAL;
}

export const nodeEvent = (id: number): GlobalEvent => ({
  type: 'NodeRegistered',
  id,
  uuid: `uuid-${id}`,
  name: `node-${id}`,
  uri: `http://10.0.${id >> 8}.${id & 255}:8080`,
  at: T0 + id,
});
