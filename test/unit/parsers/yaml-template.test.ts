import t from 'tap';
import { parse } from 'yaml';
import { parserYamlTemplate, PARSER_TEMPLATE_SCHEMA, type ParserView } from '../../../src/parsers/index.js';

const view = (extra: Partial<ParserView> = {}): ParserView => ({ id: 'i', name: 'p', isBuiltIn: false, script: 'kvParse()', fieldsToTag: [], fieldsToBeRemovedBeforeParsing: [], testCases: [], ...extra });

t.test('the template reads back as the parser, whatever its text holds', async (t) => {
  const nasty = 'line one\n# not a comment\n  "quoted" : colon - dash\t\u0001 ü 😀';
  const p = view({
    name: 'app-json',
    script: nasty,
    fieldsToTag: ['service', 'a: b'],
    fieldsToBeRemovedBeforeParsing: ['secret'],
    testCases: [
      { rawString: nasty, assertions: [{ outputEventIndex: 0, fieldsHaveValues: [{ fieldName: '#service', expectedValue: '- x' }], fieldsNotPresent: ['meta.time'] }] },
      { rawString: 'plain', assertions: [] },
    ],
  });
  const doc = parse(parserYamlTemplate(p));
  t.strictSame(doc, {
    $schema: PARSER_TEMPLATE_SCHEMA,
    name: 'app-json',
    script: nasty,
    tagFields: ['service', 'a: b'],
    fieldsToBeRemovedBeforeParsing: ['secret'],
    testCases: [
      { event: { rawString: nasty }, outputAssertions: [{ outputEventIndex: 0, assertions: { fieldsHaveValues: [{ fieldName: '#service', expectedValue: '- x' }], fieldsNotPresent: ['meta.time'] } }] },
      { event: { rawString: 'plain' }, outputAssertions: [] },
    ],
  });
  t.strictSame(parse(parserYamlTemplate(view())), { $schema: PARSER_TEMPLATE_SCHEMA, name: 'p', script: 'kvParse()', tagFields: [], fieldsToBeRemovedBeforeParsing: [], testCases: [] });
});
