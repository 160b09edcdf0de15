/**
 * OTLP/HTTP's two encodings of one ExportLogsServiceRequest give the same events: JSON (hex ids,
 * int64 as strings or numbers, enums as integers, empty members written out) and binary protobuf
 * (base64 ids inside the decoder, int64 as decimal strings, defaults left out). Compared as the
 * queue record's bytes, so every field, time and raw string must agree.
 */
import t from 'tap';
import { normalizeOtlp } from '../../../src/ingest/doors/otlp.js';
import { encodeLogsRequest } from '../../../src/ingest/doors/otlp-proto.js';
import { prepareRecord } from '../../../src/ingest/pipeline.js';
import type { IngestLimits } from '../../../src/ingest/limits.js';

const LIMITS: IngestLimits = { maxEventsPerRequest: 100, maxEventBytes: 1 << 20, maxFieldsPerEvent: 200, maxJsonDepth: 24 };
const AT = 1_763_700_000_000;
const TRACE = '5b8efff798038103d269b633813fc60c';
const SPAN = 'eee19b7ec3c1b174';

/** The request, with ids and int64 values written as `json` says (JSON: hex ids; protobuf's fromObject: base64). */
function request(json: boolean, intsAsNumbers: boolean): Record<string, unknown> {
  const int = (s: string): string | number => (json && intsAsNumbers && Number.isSafeInteger(Number(s)) ? Number(s) : s);
  const id = (hex: string): string => (json ? hex.toUpperCase() : Buffer.from(hex, 'hex').toString('base64'));
  const value = {
    kvlistValue: {
      values: [
        { key: 'n', value: { intValue: int('3') } },
        { key: 'big', value: { intValue: '9007199254740993' } },
        { key: 'neg', value: { intValue: int('-42') } },
        { key: 'd', value: { doubleValue: 0.1 } },
        { key: 'b', value: { boolValue: false } },
        { key: 'raw', value: { bytesValue: Buffer.from('hi').toString('base64') } },
        { key: 'list', value: { arrayValue: { values: [{ stringValue: 'x' }, { intValue: int('7') }, { kvlistValue: { values: [{ key: 'k', value: { stringValue: 'v' } }] } }] } } },
        { key: 'empty', value: { arrayValue: json ? { values: [] } : {} } },
      ],
    },
  };
  return {
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }, { key: 'cpu', value: { intValue: int('8') } }] },
        scopeLogs: [
          {
            scope: { name: 'lib', version: json ? '' : undefined, attributes: [] },
            logRecords: [
              {
                timeUnixNano: json && intsAsNumbers ? 1790000000123 * 1e6 : '1790000000123000000',
                observedTimeUnixNano: '1790000000200000001',
                severityNumber: 17,
                severityText: 'ERROR',
                body: value,
                attributes: [{ key: 'order.id', value: { stringValue: 'o-17' } }, { key: 'amount', value: { intValue: int('1250') } }],
                traceId: id(TRACE),
                spanId: id(SPAN),
                flags: 1,
                ...(json ? { eventName: '', droppedAttributesCount: 0 } : {}),
              },
              { timeUnixNano: json ? '0' : undefined, body: { stringValue: 'plain text' }, ...(json ? { severityText: '', flags: 0, traceId: '' } : {}) },
            ],
          },
        ],
      },
    ],
  };
}

const record = (body: Buffer, encoding: 'json' | 'protobuf'): Buffer => {
  const { groups, reply } = normalizeOtlp(body, { door: 'otlp', encoding }, null, LIMITS, AT);
  t.same(reply, { rejected: 0, errorMessage: '' }, `${encoding}: every record read`);
  return prepareRecord('repo1', groups, AT).payload;
};

t.test('JSON and protobuf encodings of one request give the same record', async (t) => {
  const pb = record(encodeLogsRequest(request(false, false)), 'protobuf');
  for (const numbers of [false, true]) {
    const js = record(Buffer.from(JSON.stringify(request(true, numbers))), 'json');
    t.ok(js.equals(pb), `JSON with int64 as ${numbers ? 'numbers' : 'strings'} gives protobuf's bytes`);
  }
  const { groups } = normalizeOtlp(Buffer.from(JSON.stringify(request(true, true))), { door: 'otlp', encoding: 'json' }, null, LIMITS, AT);
  const e = groups[0]!.events[0]!;
  t.same(JSON.parse(e.rawstring).n, 3, 'an int64 that fits a number is a number in the raw string');
  t.equal(JSON.parse(e.rawstring).big, '9007199254740993', 'one past 2^53 stays a string');
  t.equal(e.fields.traceId, TRACE, 'upper-case hex ids are read');
  t.equal(e.fields['body.list[1]'], '7');
});
