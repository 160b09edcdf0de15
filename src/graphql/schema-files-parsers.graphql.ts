/**
 * The GraphQL schema of lookup files and custom parsers, as extensions of the core schema
 * (schema.graphql.ts), with the product's names (api-facts §6.3, Appendix B).
 */
export const FILES_PARSERS_SDL = /* GraphQL */ `
"A repository or view name (humioctl declares createParserV2/deleteParser variables with it)."
scalar RepoOrViewName

type File {
  contentHash: String!
  nameAndPath: FileNameAndPath!
}

type FileNameAndPath {
  "The name a query uses: a repository file's name, or /shared/<name> for a shared file."
  name: String!
  "null for a file of the repository; /shared for a shared file."
  path: String
}

extend interface SearchDomain {
  files: [File!]!
}

extend type Repository {
  files: [File!]!
  parsers: [Parser!]!
  parser(id: String, name: String): Parser
}

extend type Parser {
  displayName: String!
  description: String
  script: String!
  fieldsToTag: [String!]!
  fieldsToBeRemovedBeforeParsing: [String!]!
  testCases: [ParserTestCase!]!
  "Legacy name of script."
  sourceCode: String!
  "Legacy name of fieldsToTag."
  tagFields: [String!]!
  "The parser as a YAML template (humioctl parsers export); every scalar is a double-quoted string."
  yamlTemplate: String!
}

type ParserTestCase {
  event: ParserTestEvent!
  outputAssertions: [ParserTestCaseAssertionsForOutput!]!
}

type ParserTestEvent {
  rawString: String!
}

type ParserTestCaseAssertionsForOutput {
  outputEventIndex: Int!
  assertions: ParserTestCaseOutputAssertions!
}

type ParserTestCaseOutputAssertions {
  fieldsHaveValues: [FieldHasValue!]!
  fieldsNotPresent: [String!]!
}

type FieldHasValue {
  fieldName: String!
  expectedValue: String!
}

input ParserTestEventInput {
  rawString: String!
}

input FieldHasValueInput {
  fieldName: String!
  expectedValue: String!
}

input ParserTestCaseOutputAssertionsInput {
  fieldsHaveValues: [FieldHasValueInput!]
  fieldsNotPresent: [String!]
}

input ParserTestCaseAssertionsForOutputInput {
  outputEventIndex: Int!
  assertions: ParserTestCaseOutputAssertionsInput!
}

input ParserTestCaseInput {
  event: ParserTestEventInput!
  outputAssertions: [ParserTestCaseAssertionsForOutputInput!]
}

input CreateParserInputV2 {
  name: String!
  script: String!
  testCases: [ParserTestCaseInput!]!
  repositoryName: RepoOrViewName!
  fieldsToTag: [String!]!
  fieldsToBeRemovedBeforeParsing: [String!]!
  allowOverwritingExistingParser: Boolean
  languageVersion: String
}

input DeleteParserInput {
  id: String!
  repositoryName: RepoOrViewName!
}

extend type Mutation {
  "Removes a file of the repository (name), or a shared file when fileName starts with /shared/ (root only)."
  removeFile(name: String!, fileName: String!): BooleanResultType!
  createParserV2(input: CreateParserInputV2!): Parser!
  deleteParser(input: DeleteParserInput!): BooleanResultType!
}
`;
