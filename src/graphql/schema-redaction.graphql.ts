/**
 * Event redaction in the GraphQL schema, with the product's names (redactEvents,
 * cancelRedactEvents, DeleteEvents); logsvc adds the task's status and outcome to DeleteEvents and
 * `includeFinished` to the list (the product lists only tasks under way). docs/redaction.md.
 */
export const REDACTION_SDL = /* GraphQL */ `
extend type Query {
  "Redactions of the repository under way (with includeFinished: true, also done and cancelled ones)."
  redactEvents(repositoryName: String!, includeFinished: Boolean): [DeleteEvents!]!
}

extend type Mutation {
  "Redacts the events the query matches within [start, end], ingested before now; returns the task's id."
  redactEvents(input: RedactEventsInputType!): String!
  "Stops a redaction on the nodes that have not finished it; true if it was under way."
  cancelRedactEvents(input: CancelRedactEventsInput!): Boolean!
}

input RedactEventsInputType {
  repositoryName: String!
  start: DateTime!
  end: DateTime!
  query: String!
  userMessage: String
}

input CancelRedactEventsInput {
  repositoryName: String!
  redactionTaskId: String!
}

enum LanguageVersionEnum {
  legacy
}

type LanguageVersion {
  name: LanguageVersionEnum
}

"A deletion of a set of events."
type DeleteEvents {
  id: String!
  created: DateTime!
  start: DateTime!
  end: DateTime!
  query: String!
  createdByUser: String
  languageVersion: LanguageVersion!
  "logsvc: running (some node has segments left to rewrite), done (every node finished) or cancelled."
  status: String!
  userMessage: String
  "logsvc: events left out and segments rewritten, over the nodes that finished."
  eventsRedacted: Long!
  segmentsRewritten: Int!
  "logsvc: ids of the nodes that finished it."
  finishedOnNodes: [Int!]!
}
`;
