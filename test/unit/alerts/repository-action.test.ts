/** The repository action's events: whatever the token's parser, the timestamp is the trigger's now. */
import t from 'tap';
import { repositoryActionEvents } from '../../../src/alerts/actions/repository.js';
import type { TriggerContext } from '../../../src/alerts/trigger.js';

const NOW = 1_800_000_000_000;
const ctx: TriggerContext = {
  alertId: 'a1',
  alertName: 'copy',
  description: '',
  queryString: 'x',
  queryStart: '1h',
  repositoryName: 'src',
  triggeredAt: NOW,
  startMs: NOW - 3_600_000,
  endMs: NOW,
  rows: [Object.assign(Object.create(null) as Record<string, string | number>, { '@timestamp': NOW - 1_800_000, '@rawstring': 'r', '#host': 'h', level: 'ERROR' })],
  eventCount: 1,
  warnings: [],
  url: 'http://x',
};
const limits = { maxEventsPerRequest: 1000, maxEventBytes: 1 << 20, maxFieldsPerEvent: 1000, maxJsonDepth: 64 };
const inv = { actionId: 'ac', invocationId: 'inv' };

t.test('a built-in parser that reads timestamps (json) does not take the row\'s @timestamp', async (t) => {
  const [g] = repositoryActionEvents(ctx, inv, 'json', NOW, limits);
  t.equal(g!.tags.type, 'json');
  t.equal(g!.events[0]!.timestamp, NOW);
  t.equal(g!.events[0]!.fields.level, 'ERROR');
  t.equal(g!.events[0]!.fields['@trigger.name'], 'copy');
});

t.test('without a parser: json-for-action, the row\'s fields as they are, timestamp now', async (t) => {
  const [g] = repositoryActionEvents(ctx, inv, null, NOW, limits);
  t.equal(g!.tags.type, 'json-for-action');
  t.equal(g!.events[0]!.timestamp, NOW);
  t.equal(g!.events[0]!.fields['@tag.host'], 'h');
});
