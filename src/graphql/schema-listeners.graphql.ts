/**
 * The GraphQL schema of ingest listeners (syslog over TCP/UDP), as extensions of the core schema,
 * with the product's names: createIngestListenerV3, updateIngestListenerV3, deleteIngestListener,
 * Repository.ingestListeners. GELF and Netflow protocols are declared (clients send the enum) but
 * refused with a message saying they are not built.
 */
export const LISTENERS_SDL = /* GraphQL */ `
enum IngestListenerProtocol {
  TCP
  UDP
  GELF_TCP
  GELF_UDP
  NETFLOW_UDP
}

type IngestListener {
  id: String!
  name: String!
  repository: Repository!
  protocol: IngestListenerProtocol!
  "The address the listener binds; empty for every interface (0.0.0.0)."
  bindInterface: String!
  port: Int!
  "The parser every message goes through; null if it was deleted since."
  parser: Parser
  charset: String!
  vHost: Int
}

input CreateIngestListenerV3Input {
  repositoryName: String!
  name: String!
  protocol: IngestListenerProtocol!
  port: Int!
  bindInterface: String
  "A parser's name (syslog when neither this nor parserId is given)."
  parser: String
  parserId: String
  charset: String
  vHost: Int
}

input UpdateIngestListenerV3Input {
  id: String!
  repositoryName: String!
  name: String!
  protocol: IngestListenerProtocol!
  port: Int!
  bindInterface: String
  parser: String
  parserId: String
  charset: String
  vHost: Int
}

extend type Repository {
  ingestListeners: [IngestListener!]!
}

extend type Mutation {
  createIngestListenerV3(input: CreateIngestListenerV3Input!): IngestListener!
  updateIngestListenerV3(input: UpdateIngestListenerV3Input!): IngestListener!
  deleteIngestListener(id: String!): BooleanResultType!
}
`;
