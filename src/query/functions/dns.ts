/**
 * reverseDns() and the deprecated rdns() (query-functions.md §1): the host name of the IP address
 * in a field, from a reverse (PTR) lookup. Lookups wait on name servers, so they run on the
 * coordinator over the finished rows (MapStage.prepare), never per event in a scan: reverseDns()
 * only after an aggregate and at the top level of the query, as the product requires; rdns()
 * before any aggregate is the product's own equivalent `tail(limit) | rdns(...)`. The resolver,
 * its bounds and the outbound guard are src/query/rdns.ts. A row whose address was not resolved
 * (no name, over the limit, too late, an internal address) keeps its fields, without the output.
 */
import type { Call } from '../ast.js';
import { guardFor, RDNS_DEFAULT_LIMIT, reverseNames, serverAddress, type RdnsSettings } from '../rdns.js';
import type { BoundArgs } from './args.js';
import type { CompileEnv, FnDef } from './types.js';

function settingsOf(a: BoundArgs, env: CompileEnv): RdnsSettings {
  const s = env.ctx.rdns;
  if (s === undefined) return env.fail(a.call.span, `function ${a.def.name} is not available here: reverse DNS runs only in queries on a node (query.rdns_enabled)`);
  if (!s.enabled) return env.fail(a.call.span, `function ${a.def.name} is disabled on this node (query.rdns_enabled = false)`);
  return s;
}

function reverseFunction(name: 'reverseDns' | 'rdns'): FnDef {
  const defaultAs = name === 'rdns' ? 'hostname' : '_hostname';
  return {
    name,
    params: [
      { name: 'field', type: 'field', unnamed: true, required: true },
      { name: 'as', type: 'string', default: defaultAs },
      { name: 'limit', type: 'number', default: String(RDNS_DEFAULT_LIMIT) },
      { name: 'server', type: 'string', default: '(query.rdns_server, else the system name servers)' },
    ],
    // rdns() collected its events itself: before any aggregate it is tail(limit) | rdns(...).
    before(call: Call, env: CompileEnv): Call[] | undefined {
      if (name !== 'rdns' || env.priorAggregate) return undefined;
      const limit = call.args.find((x) => x.name?.toLowerCase() === 'limit');
      return [{ name: 'tail', args: limit === undefined ? [] : [{ ...limit, name: 'limit' }], span: call.span }];
    },
    stage(a, env) {
      if (env.where !== 'top' || !env.priorAggregate) {
        return env.fail(a.call.span, `function ${name} can only be used after an aggregate function (such as tail(100) or groupBy(ip, function=[], limit=100)), at the top level of the query`);
      }
      const s = settingsOf(a, env);
      const field = a.string('field')!;
      const as = a.string('as', defaultAs)!;
      const limit = a.number('limit', Math.min(RDNS_DEFAULT_LIMIT, s.maxLimit))!;
      if (!Number.isInteger(limit) || limit < 1 || limit > s.maxLimit) a.fail('limit', `parameter limit of function ${name} must be a whole number from 1 to ${s.maxLimit} (query.rdns_max_limit)`);
      let server = s.server;
      const given = a.string('server');
      if (given !== undefined) {
        const address = serverAddress(given);
        if (address === null) return a.fail('server', `parameter server of function ${name} must be an IP address, optionally with a port (8.8.8.8, 10.0.0.2:5353, [::1]:53), not ${JSON.stringify(given)}`);
        if (!guardFor(s.allowTargets).permits(address)) {
          a.fail('server', `parameter server of function ${name}: ${given} is refused: loopback, private and link-local name servers are not allowed unless listed in alerts.allow_targets`);
        }
        server = given;
      }
      let names = new Map<string, string>();
      return {
        async prepare(rows) {
          const values: string[] = [];
          for (const r of rows) {
            const v = r.get(field);
            if (v !== undefined) values.push(v.trim());
          }
          const out = await reverseNames(name, values, limit, server, s);
          names = out.names;
          return out.warnings;
        },
        run(e, emit) {
          const v = e.get(field);
          const host = v === undefined ? undefined : names.get(v.trim());
          if (host !== undefined) e.set(as, host);
          emit(e);
        },
      };
    },
  };
}

export const dnsFunctions: FnDef[] = [reverseFunction('reverseDns'), reverseFunction('rdns')];
