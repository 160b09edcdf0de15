/**
 * ActionService: create, list, read and delete a repository's actions. Properties are validated
 * per type (action-input.ts) and stored sealed; an email action needs an SMTP server in the
 * config, a repository action a valid ingest token. Deleting an action removes it from the alerts
 * that used it (global-state apply does that, so every node agrees).
 */
import { LogsvcError } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';
import type { ActionDefinition, ActionKind, GlobalStore } from '../global/index.js';
import { newId, tokenDigest, type Principal, type SecretBox } from '../auth/index.js';
import { actionProperties, type ActionProperties } from './action-input.js';
import { memberDomain, type AlertDomain } from './access.js';
import { MAX_NAME_CHARS } from './limits.js';

export interface ActionView {
  id: string;
  name: string;
  repositoryName: string;
  props: ActionProperties;
}

export interface ActionServiceOptions {
  maxPerRepository: number;
  /** False when alerts.smtp_host is empty. */
  smtpConfigured: boolean;
}

const NAME = /^[^\p{Cc}]+$/u;

export function checkName(name: unknown, field = 'name'): string {
  if (typeof name !== 'string' || name.trim() === '') throw new LogsvcError('E_VALIDATION', `${field}: required, a non-empty string`);
  if (name.length > MAX_NAME_CHARS) throw new LogsvcError('E_VALIDATION', `${field}: longer than ${MAX_NAME_CHARS} characters`);
  if (!NAME.test(name)) throw new LogsvcError('E_VALIDATION', `${field}: must not contain control characters`);
  return name;
}

export class ActionService {
  constructor(
    private readonly store: GlobalStore,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    private readonly opts: ActionServiceOptions,
  ) {}

  /** The properties of a stored action (the scheduler calls this for each delivery). */
  open(a: ActionDefinition): ActionProperties {
    return JSON.parse(this.box.open(a.sealed)) as ActionProperties;
  }

  private view(a: ActionDefinition, repositoryName: string): ActionView {
    return { id: a.id, name: a.name, repositoryName, props: this.open(a) };
  }

  list(p: Principal, repositoryName: string, ids?: readonly string[]): ActionView[] {
    const repo = memberDomain(this.store.state, p, repositoryName, 'listing actions');
    const all = this.store.state.alerting.actionsOf(repo.id).sort((a, b) => a.name.localeCompare(b.name));
    return (ids === undefined ? all : all.filter((a) => ids.includes(a.id))).map((a) => this.view(a, repo.name));
  }

  get(p: Principal, repositoryName: string, idOrName: string): ActionView {
    const repo = memberDomain(this.store.state, p, repositoryName, 'reading an action');
    return this.view(this.find(repo, idOrName), repo.name);
  }

  private find(domain: AlertDomain, idOrName: string): ActionDefinition {
    const a = this.store.state.alerting.actions.get(idOrName);
    if (a !== undefined && a.repositoryId === domain.id) return a;
    const named = this.store.state.alerting.actionsOf(domain.id).filter((x) => x.name === idOrName);
    if (named.length === 1) return named[0]!;
    throw new LogsvcError('E_NOT_FOUND', `action "${idOrName.slice(0, 200)}" does not exist in ${domain.kind} "${domain.name}"`);
  }

  async create(p: Principal, repositoryName: string, kind: ActionKind, name: unknown, input: Record<string, unknown>): Promise<ActionView> {
    memberDomain(this.store.state, p, repositoryName, 'creating an action', 'create:Actions');
    const actionName = checkName(name);
    const props = actionProperties(kind, input);
    if (props.kind === 'email' && !this.opts.smtpConfigured) {
      throw new LogsvcError('E_NOT_CONFIGURED', 'email actions need an SMTP server: set alerts.smtp_host (and smtp_port, smtp_sender) in the [alerts] section of the node config');
    }
    if (props.kind === 'repository' && !this.store.state.ingestTokensByDigest.has(tokenDigest(props.ingestToken))) {
      throw new LogsvcError('E_VALIDATION', 'ingestToken: not a valid ingest token of any repository');
    }
    const id = newId();
    const sealed = this.box.seal(JSON.stringify(props));
    await this.store.transact((s) => {
      const repo = memberDomain(s, p, repositoryName, 'creating an action', 'create:Actions');
      const existing = s.alerting.actionsOf(repo.id);
      if (existing.some((a) => a.name === actionName)) throw new LogsvcError('E_CONFLICT', `an action named "${actionName}" already exists in ${repo.kind} "${repo.name}"`);
      if (existing.length >= this.opts.maxPerRepository) {
        throw new LogsvcError('E_CONFLICT', `${repo.kind} "${repo.name}" already has ${existing.length} actions, the most allowed (alerts.max_actions_per_repository)`);
      }
      return { events: [{ type: 'ActionSaved', action: { id, repositoryId: repo.id, name: actionName, kind, sealed, createdAt: this.clock.now() } }], result: undefined };
    });
    return { id, name: actionName, repositoryName, props };
  }

  delete(p: Principal, repositoryName: string, idOrName: string): Promise<void> {
    return this.store.transact((s) => {
      const repo = memberDomain(s, p, repositoryName, 'deleting an action', 'delete:Actions');
      const a = this.find(repo, idOrName);
      return { events: [{ type: 'ActionDeleted', id: a.id }], result: undefined };
    });
  }
}
