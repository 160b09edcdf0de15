export { CustomParser, UncompilableParser, ParserBudget, compiledParser, type MessageParser, MAX_OUTPUT_EVENTS, type CustomParserDef, type ParserTimeLimits, type ParsedEvent, type ParserInput } from './custom-parser.js';
export { ParserService, type ParserView, type ParserLimits } from './parser-service.js';
export { parserYamlTemplate, PARSER_TEMPLATE_SCHEMA } from './yaml-template.js';
export { encodeParserSet, parserDefAt, isParserSet, type ParserSet } from './parser-set.js';
