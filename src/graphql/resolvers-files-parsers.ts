/**
 * Resolvers of lookup files and custom parsers: Repository.files/parsers/parser, and the
 * removeFile, createParserV2 and deleteParser mutations. Rules live in FileService and
 * ParserService; this module only translates shapes.
 */
import type { ParserTestCase, Repository } from '../global/index.js';
import { SHARED_PREFIX } from '../files/index.js';
import { parserYamlTemplate, type ParserView } from '../parsers/index.js';
import type { GraphqlContext } from './context.js';

type Args = Record<string, unknown>;
type Resolver = (args: Args, ctx: GraphqlContext) => unknown;
/** A field of an object type: the parent object, then arguments. */
export type FieldResolver = (source: unknown, args: Args, ctx: GraphqlContext) => unknown;

interface TestCaseInput {
  event: { rawString: string };
  outputAssertions?: { outputEventIndex: number; assertions: { fieldsHaveValues?: { fieldName: string; expectedValue: string }[] | null; fieldsNotPresent?: string[] | null } }[] | null;
}

function testCasesOf(input: TestCaseInput[]): ParserTestCase[] {
  return input.map((c) => ({
    rawString: c.event.rawString,
    assertions: (c.outputAssertions ?? []).map((a) => ({
      outputEventIndex: a.outputEventIndex,
      fieldsHaveValues: a.assertions.fieldsHaveValues ?? [],
      fieldsNotPresent: a.assertions.fieldsNotPresent ?? [],
    })),
  }));
}

export function parserShape(p: ParserView) {
  return {
    id: p.id,
    name: p.name,
    displayName: p.name,
    description: null,
    isBuiltIn: p.isBuiltIn,
    script: p.script,
    sourceCode: p.script,
    fieldsToTag: p.fieldsToTag,
    tagFields: p.fieldsToTag,
    fieldsToBeRemovedBeforeParsing: p.fieldsToBeRemovedBeforeParsing,
    yamlTemplate: () => parserYamlTemplate(p),
    testCases: p.testCases.map((c) => ({
      event: { rawString: c.rawString },
      outputAssertions: c.assertions.map((a) => ({ outputEventIndex: a.outputEventIndex, assertions: { fieldsHaveValues: a.fieldsHaveValues, fieldsNotPresent: a.fieldsNotPresent } })),
    })),
  };
}

/** Fields of Repository (and SearchDomain) added by this module, resolved from the repository shape. */
export const repositoryFieldResolvers: Record<string, FieldResolver> = {
  files: (src, _a, ctx) =>
    ctx.services.files.list(ctx.principal, (src as { name: string }).name).map(({ file, shared }) => ({
      contentHash: file.contentHash,
      // A shared file is listed by the name queries and removeFile take (`/shared/<name>`), so that
      // clients that read only `name` (humioctl files list) can tell it from a repository file.
      nameAndPath: { name: shared ? `${SHARED_PREFIX}${file.name}` : file.name, path: shared ? SHARED_PREFIX.slice(0, -1) : null },
    })),
  parsers: (src, _a, ctx) => ctx.services.parsers.list(ctx.principal, repositoryOf(src, ctx)).map(parserShape),
  parser: (src, a, ctx) => {
    const found = ctx.services.parsers.find(ctx.principal, repositoryOf(src, ctx), { id: a.id as string | null, name: a.name as string | null });
    return found === null ? null : parserShape(found);
  },
};

function repositoryOf(src: unknown, ctx: GraphqlContext): Repository {
  return ctx.services.repositories.get(ctx.principal, (src as { name: string }).name);
}

export const filesParsersMutations: Record<string, Resolver> = {
  removeFile: async (a, ctx) => {
    const fileName = a.fileName as string;
    if (fileName.startsWith(SHARED_PREFIX)) await ctx.services.files.remove(ctx.principal, null, fileName.slice(SHARED_PREFIX.length));
    else await ctx.services.files.remove(ctx.principal, a.name as string, fileName);
    return { __typename: 'BooleanResultType', result: true };
  },
  createParserV2: async (a, ctx) => {
    const i = a.input as {
      name: string;
      script: string;
      testCases: TestCaseInput[];
      repositoryName: string;
      fieldsToTag: string[];
      fieldsToBeRemovedBeforeParsing: string[];
      allowOverwritingExistingParser?: boolean | null;
    };
    return parserShape(
      await ctx.services.parsers.create(ctx.principal, {
        name: i.name,
        script: i.script,
        testCases: testCasesOf(i.testCases),
        repositoryName: i.repositoryName,
        fieldsToTag: i.fieldsToTag,
        fieldsToBeRemovedBeforeParsing: i.fieldsToBeRemovedBeforeParsing,
        allowOverwritingExistingParser: i.allowOverwritingExistingParser === true,
      }),
    );
  },
  deleteParser: async (a, ctx) => {
    const i = a.input as { id: string; repositoryName: string };
    await ctx.services.parsers.delete(ctx.principal, i.repositoryName, i.id);
    return { result: true };
  },
};
