/**
 * A parser as a YAML template (Parser.yamlTemplate, what `humioctl parsers export` writes to a
 * file). Every scalar is written as a JSON string, which is also a valid YAML double-quoted scalar,
 * so no text (newlines, quotes, `#`, leading spaces) can change the document's structure; the
 * layout is block style so the file reads and diffs like the product's.
 */
import type { ParserView } from './parser-service.js';

/** The parser template schema the product's exports name. */
export const PARSER_TEMPLATE_SCHEMA = 'https://schemas.humio.com/parser/v0.3.0';

const q = (s: string): string => JSON.stringify(s);

function list(indent: string, items: readonly string[]): string {
  return items.length === 0 ? ' []\n' : `\n${items.map((i) => `${indent}- ${q(i)}\n`).join('')}`;
}

export function parserYamlTemplate(p: ParserView): string {
  let out = `$schema: ${q(PARSER_TEMPLATE_SCHEMA)}\nname: ${q(p.name)}\nscript: ${q(p.script)}\n`;
  out += `tagFields:${list('  ', p.fieldsToTag)}`;
  out += `fieldsToBeRemovedBeforeParsing:${list('  ', p.fieldsToBeRemovedBeforeParsing)}`;
  if (p.testCases.length === 0) return `${out}testCases: []\n`;
  out += 'testCases:\n';
  for (const c of p.testCases) {
    out += `  - event:\n      rawString: ${q(c.rawString)}\n`;
    if (c.assertions.length === 0) {
      out += '    outputAssertions: []\n';
      continue;
    }
    out += '    outputAssertions:\n';
    for (const a of c.assertions) {
      out += `      - outputEventIndex: ${a.outputEventIndex}\n        assertions:\n`;
      if (a.fieldsHaveValues.length === 0) out += '          fieldsHaveValues: []\n';
      else {
        out += '          fieldsHaveValues:\n';
        for (const f of a.fieldsHaveValues) out += `            - fieldName: ${q(f.fieldName)}\n              expectedValue: ${q(f.expectedValue)}\n`;
      }
      out += `          fieldsNotPresent:${list('            ', a.fieldsNotPresent)}`;
    }
  }
  return out;
}
