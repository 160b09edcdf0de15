/**
 * The questions, each in both languages: logsvc's (LogScale's query language, POST
 * /api/v1/repositories/<repo>/query) and LogsQL (VictoriaLogs' /select/logsql/query, or
 * /select/logsql/stats_query_range for the time histogram). Each names its answer kind
 * (compare.mjs) and, where the answer is a group or value, the field that holds it.
 *
 * Language differences the questions respect: logsvc's free text is a case-insensitive substring of
 * any field, LogsQL's word and phrase filters are case-sensitive and match whole words of `_msg`
 * (here the raw line, as in logsvc's @rawstring): the words asked for have no other case and stand
 * as whole words, so both count the same events. Percentiles and distinct counts are estimates on
 * both sides and are compared within a tolerance.
 */
import { RARE_TOKEN } from './corpus.mjs';

/**
 * @typedef {object} Question
 * @property {string} id short name for tables
 * @property {string} kind question kind (the issue's list, and some more)
 * @property {import('./compare.mjs').AnswerKind} answer
 * @property {string} logsvc query string
 * @property {string} vl LogsQL
 * @property {'query' | 'stats_query_range'} [vlEndpoint]
 * @property {string} [step] stats_query_range step
 * @property {string} [field] group field (logsvc name; VictoriaLogs' flattened name is the same)
 * @property {string} [valueField] logsvc's output field of a `value` answer
 * @property {number} [tolerance] relative, for `value`
 */

/** The histogram's bucket width, in both languages. */
const SPAN = '1m';

/** @type {Question[]} */
export const ACCESS_QUESTIONS = [
  { id: 'rare', kind: 'rare token', answer: 'events', logsvc: RARE_TOKEN, vl: RARE_TOKEN },
  { id: 'word', kind: 'common word', answer: 'count', logsvc: 'Firefox | count()', vl: 'Firefox | stats count() c' },
  { id: 'phrase', kind: 'phrase', answer: 'count', logsvc: '"Mac OS X" | count()', vl: '"Mac OS X" | stats count() c' },
  { id: 'filter', kind: 'field filter with count', answer: 'count', logsvc: 'statuscode=404 | count()', vl: 'statuscode:=404 | stats count() c' },
  { id: 'groupby', kind: 'count by a field', answer: 'groups', field: 'method', logsvc: 'groupBy(method)', vl: '* | stats by (method) count() c' },
  { id: 'top10', kind: 'top 10 by a field', answer: 'top', field: 'client', logsvc: 'top(client, limit=10)', vl: '* | top 10 (client)' },
  { id: 'histogram', kind: 'time histogram', answer: 'histogram', logsvc: `timechart(span=${SPAN})`, vl: '* | stats count() c', vlEndpoint: 'stats_query_range', step: SPAN },
  { id: 'regex', kind: 'regex', answer: 'count', logsvc: '/POST \\/api\\/v2\\/orders\\/[0-9]+\\/cancel/ | count()', vl: '~"POST /api/v2/orders/[0-9]+/cancel" | stats count() c' },
  { id: 'substring', kind: 'substring', answer: 'count', logsvc: 'ireless | count()', vl: '*ireless* | stats count() c' },
  { id: 'count', kind: 'count of everything', answer: 'count', logsvc: 'count()', vl: '* | stats count() c' },
  { id: 'p95', kind: 'percentile', answer: 'value', valueField: '_95', tolerance: 0.05, logsvc: 'percentile(field=responsetime, percentiles=[95])', vl: '* | stats quantile(0.95, responsetime) v' },
  { id: 'distinct', kind: 'count distinct', answer: 'value', valueField: '_count', tolerance: 0.03, logsvc: 'count(client, distinct=true)', vl: '* | stats count_uniq(client) v' },
  { id: 'range', kind: 'numeric range with count', answer: 'count', logsvc: 'responsesize > 100000 | count()', vl: 'responsesize:>100000 | stats count() c' },
  { id: 'filtergroup', kind: 'field filter, count by a field', answer: 'groups', field: 'statuscode', logsvc: 'method=POST | groupBy(statuscode)', vl: 'method:=POST | stats by (statuscode) count() c' },
  { id: 'not', kind: 'negated field filter with count', answer: 'count', logsvc: 'method!=GET | count()', vl: '-method:=GET | stats count() c' },
  { id: 'avg', kind: 'average of a field', answer: 'value', valueField: '_avg', tolerance: 1e-6, logsvc: 'avg(responsesize)', vl: '* | stats avg(responsesize) v' },
];

/** @type {Question[]} */
export const JSON_QUESTIONS = [
  { id: 'rare', kind: 'rare token', answer: 'events', logsvc: RARE_TOKEN, vl: RARE_TOKEN },
  { id: 'word', kind: 'common word', answer: 'count', logsvc: 'failed | count()', vl: 'failed | stats count() c' },
  { id: 'phrase', kind: 'phrase', answer: 'count', logsvc: '"cache miss" | count()', vl: '"cache miss" | stats count() c' },
  { id: 'filter', kind: 'field filter with count', answer: 'count', logsvc: 'level=ERROR | count()', vl: 'level:=ERROR | stats count() c' },
  { id: 'groupby', kind: 'count by a field', answer: 'groups', field: 'service', logsvc: 'groupBy(service)', vl: '* | stats by (service) count() c' },
  { id: 'top10', kind: 'top 10 by a field', answer: 'top', field: 'version', logsvc: 'top(version, limit=10)', vl: '* | top 10 (version)' },
  { id: 'histogram', kind: 'time histogram', answer: 'histogram', logsvc: `timechart(span=${SPAN})`, vl: '* | stats count() c', vlEndpoint: 'stats_query_range', step: SPAN },
  { id: 'regex', kind: 'regex', answer: 'count', logsvc: '/request failed: (Timeout|Deadlock)/ | count()', vl: '~"request failed: (Timeout|Deadlock)" | stats count() c' },
  { id: 'substring', kind: 'substring', answer: 'count', logsvc: 'eadlockDetec | count()', vl: '*eadlockDetec* | stats count() c' },
  { id: 'count', kind: 'count of everything', answer: 'count', logsvc: 'count()', vl: '* | stats count() c' },
  { id: 'p95', kind: 'percentile', answer: 'value', valueField: '_95', tolerance: 0.05, logsvc: 'percentile(field=duration_ms, percentiles=[95])', vl: '* | stats quantile(0.95, duration_ms) v' },
  { id: 'distinct', kind: 'count distinct', answer: 'value', valueField: '_count', tolerance: 0.03, logsvc: 'count(user.id, distinct=true)', vl: '* | stats count_uniq(user.id) v' },
  { id: 'range', kind: 'numeric range with count', answer: 'count', logsvc: 'http.response.status >= 500 | count()', vl: 'http.response.status:>=500 | stats count() c' },
  { id: 'nested', kind: 'nested field filter, count by a nested field', answer: 'groups', field: 'user.geo.country', logsvc: 'user.plan=enterprise | groupBy(user.geo.country)', vl: 'user.plan:=enterprise | stats by (user.geo.country) count() c' },
  { id: 'sum', kind: 'sum of a nested field', answer: 'value', valueField: '_sum', tolerance: 1e-9, logsvc: 'sum(http.response.bytes)', vl: '* | stats sum(http.response.bytes) v' },
];
