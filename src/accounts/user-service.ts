/**
 * Users and their API tokens: adding, updating, removing, rotating. Every change is a global event;
 * the rules (who may, what is valid) are checked inside the store's transaction so they hold under
 * concurrency.
 */
import { LogsvcError } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';
import type { GlobalStore, User, UserFields } from '../global/index.js';
import { isRoot, newApiToken, newId, requireRoot, requireUser, tokenDigest, type Principal } from '../auth/index.js';

export const ROOT_USERNAME = 'admin';
const USERNAME = /^[^\s\p{Cc}]{1,254}$/u;
const FIELD_LIMIT = 1024;

export interface AddUserInput extends UserFields {
  username: string;
  isRoot?: boolean | undefined;
}

export interface UpdateUserInput extends UserFields {
  username: string;
  isRoot?: boolean | undefined;
}

function checkFields(f: UserFields): UserFields {
  const out: UserFields = {};
  for (const key of ['fullName', 'email', 'company', 'countryCode', 'picture'] as const) {
    const v = f[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string' || v.length > FIELD_LIMIT) throw new LogsvcError('E_VALIDATION', `${key}: must be a string of at most ${FIELD_LIMIT} characters`);
    out[key] = v;
  }
  return out;
}

export class UserService {
  constructor(
    private readonly store: GlobalStore,
    private readonly clock: Clock,
  ) {}

  list(p: Principal, search?: string): User[] {
    requireUser(p, 'listing users');
    const all = [...this.store.state.users.values()];
    const visible = isRoot(p) ? all : all.filter((u) => p.kind === 'user' && u.id === p.userId);
    const needle = search?.toLowerCase();
    return (needle === undefined || needle === '' ? visible : visible.filter((u) => u.username.toLowerCase().includes(needle))).sort((a, b) =>
      a.username.localeCompare(b.username),
    );
  }

  byId(id: string): User | undefined {
    return this.store.state.users.get(id);
  }

  /** Creates the root user on first start; does nothing afterwards. */
  async ensureRootUser(): Promise<void> {
    await this.store.transact((s) => ({
      events: s.users.size === 0 ? [{ type: 'UserAdded' as const, id: newId(), username: ROOT_USERNAME, isRoot: true, at: this.clock.now() }] : [],
      result: undefined,
    }));
  }

  add(p: Principal, input: AddUserInput): Promise<User> {
    requireRoot(p, 'adding a user');
    if (typeof input.username !== 'string' || !USERNAME.test(input.username)) {
      throw new LogsvcError('E_VALIDATION', 'username: must be 1 to 254 characters without spaces or control characters');
    }
    const fields = checkFields(input);
    const id = newId();
    return this.store.transact((s) => {
      if (s.userByName(input.username) !== undefined) throw new LogsvcError('E_CONFLICT', `user "${input.username}" already exists`);
      return {
        events: [{ type: 'UserAdded', id, username: input.username, isRoot: input.isRoot === true, at: this.clock.now(), ...fields }],
        result: id,
      };
    }).then((uid) => this.store.state.users.get(uid)!);
  }

  update(p: Principal, input: UpdateUserInput): Promise<User> {
    requireUser(p, 'updating a user');
    const fields = checkFields(input);
    return this.store.transact((s) => {
      const u = s.userByName(input.username);
      const self = p.kind === 'user' && u?.id === p.userId;
      if (!isRoot(p) && !self) throw new LogsvcError('E_FORBIDDEN', 'updating another user requires a root user');
      if (u === undefined) throw new LogsvcError('E_NOT_FOUND', `user "${input.username}" does not exist`);
      if (input.isRoot !== undefined && input.isRoot !== u.isRoot) {
        if (!isRoot(p)) throw new LogsvcError('E_FORBIDDEN', 'changing isRoot requires a root user');
        if (!input.isRoot) this.refuseLastRoot(s.users.values(), u);
      }
      return { events: [{ type: 'UserUpdated', id: u.id, isRoot: input.isRoot, fields }], result: u.id };
    }).then((uid) => this.store.state.users.get(uid)!);
  }

  remove(p: Principal, username: string): Promise<User> {
    requireRoot(p, 'removing a user');
    return this.store.transact((s) => {
      const u = s.userByName(username);
      if (u === undefined) throw new LogsvcError('E_NOT_FOUND', `user "${username}" does not exist`);
      if (u.isRoot) this.refuseLastRoot(s.users.values(), u);
      return { events: [{ type: 'UserRemoved', id: u.id }], result: { ...u } };
    });
  }

  /** Issues a new API token for user `id`, replacing the old one; returns it (the only time it is shown). */
  rotateToken(p: Principal, id: string): Promise<string> {
    requireUser(p, 'rotating an API token');
    const token = newApiToken();
    return this.store.transact((s) => {
      const self = p.kind === 'user' && p.userId === id;
      if (!isRoot(p) && !self) throw new LogsvcError('E_FORBIDDEN', "rotating another user's API token requires a root user");
      if (!s.users.has(id)) throw new LogsvcError('E_NOT_FOUND', `user with id "${id}" does not exist`);
      return { events: [{ type: 'UserApiTokenSet', userId: id, digest: tokenDigest(token), at: this.clock.now() }], result: token };
    });
  }

  private refuseLastRoot(users: Iterable<User>, target: User): void {
    let roots = 0;
    for (const u of users) if (u.isRoot) roots++;
    if (roots <= 1) throw new LogsvcError('E_CONFLICT', `user "${target.username}" is the last root user and cannot lose root`);
  }
}
