/**
 * The product's legacy REST user API, still called by humiolib: list, create (`{email, isRoot}`),
 * delete by id (answers with the removed user as JSON, which humiolib parses).
 */
import { LogsvcError } from '../../lib/errors.js';
import { parseJsonBounded } from '../../lib/json.js';
import type { User } from '../../global/index.js';
import { requireRoot } from '../../auth/index.js';
import { apiPrincipal, type HttpServices } from '../context.js';
import { json, type Route } from '../types.js';

const shape = (u: User) => ({
  userID: u.id,
  id: u.id,
  username: u.username,
  email: u.email ?? u.username,
  isRoot: u.isRoot,
  fullName: u.fullName ?? null,
  createdAt: new Date(u.createdAt).toISOString(),
});

export function userRoutes(s: HttpServices): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/api/v1/users',
      body: 'none',
      handle: (req) => {
        const p = apiPrincipal(s, req);
        requireRoot(p, 'listing users');
        return json(200, s.users.list(p).map(shape));
      },
    },
    {
      method: 'POST',
      pattern: '/api/v1/users',
      body: 'api',
      handle: async (req, body) => {
        const p = apiPrincipal(s, req);
        const input = parseJsonBounded(body.toString('utf8'), s.maxJsonDepth, 'user');
        if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new LogsvcError('E_VALIDATION', 'user: body must be a JSON object with "email"');
        const { email, isRoot, username } = input as Record<string, unknown>;
        const name = typeof username === 'string' ? username : email;
        if (typeof name !== 'string') throw new LogsvcError('E_VALIDATION', 'email: required, a string');
        if (isRoot !== undefined && typeof isRoot !== 'boolean') throw new LogsvcError('E_VALIDATION', 'isRoot: must be true or false');
        const u = await s.users.add(p, { username: name, isRoot: isRoot === true, email: typeof email === 'string' ? email : undefined });
        return json(200, shape(u));
      },
    },
    {
      method: 'DELETE',
      pattern: '/api/v1/users/:id',
      body: 'none',
      handle: async (req) => {
        const p = apiPrincipal(s, req);
        requireRoot(p, 'removing a user');
        const u = s.users.byId(req.params.id!);
        if (u === undefined) throw new LogsvcError('E_NOT_FOUND', `user with id "${req.params.id}" does not exist`);
        return json(200, shape(await s.users.remove(p, u.username)));
      },
    },
  ];
}
