/**
 * Every GraphQL operation humioctl sends for a feature logsvc has must validate against logsvc's
 * schema (graphql-js `validate`, the same check the endpoint runs before executing).
 */
import t from 'tap';
import { parse, validate } from 'graphql';
import { buildExecutableSchema } from '../../../src/graphql/index.js';
import { HUMIOCTL_DOCUMENTS } from '../../fixtures/humioctl/documents.js';

const schema = buildExecutableSchema();

t.test('humioctl documents validate against the schema', async (t) => {
  const files = new Set(HUMIOCTL_DOCUMENTS.map((d) => d.file));
  for (const f of ['repositories', 'searchdomains', 'views', 'groups', 'token', 'roles', 'cluster', 'alerts', 'filter-alerts', 'aggregate-alerts', 'scheduled-search', 'scheduled-search-v2', 'actions', 'users', 'ingest-tokens']) {
    t.ok(files.has(f), `the fixture holds humioctl's ${f} operations`);
  }
  for (const d of HUMIOCTL_DOCUMENTS) {
    const errors = validate(schema, parse(d.document));
    t.strictSame(
      errors.map((e) => e.message),
      [],
      `${d.file}: ${d.operation}`,
    );
  }
});

t.test('the check can fail: a field the schema lacks is reported', async (t) => {
  const errors = validate(schema, parse('query { repository(name: "x") { id noSuchFieldInLogsvc } }'));
  t.equal(errors.length, 1);
  t.match(errors[0]!.message, /noSuchFieldInLogsvc/);
});
