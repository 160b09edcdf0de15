/**
 * The GraphQL schema we serve: the part of the product's schema that logsvc implements, with the
 * product's type and field names so that existing clients (humioctl, vector, humiolib) work.
 */
export const SDL = /* GraphQL */ `
"""An instant as an RFC 3339 string (UTC)."""
scalar DateTime
"""A 64-bit integer."""
scalar Long

type Query {
  "Deprecated name for users, kept for old clients."
  accounts: [Account!]!
  users(search: String): [User!]!
  user(id: String!): User
  currentUser: User!
  viewer: Account!
  repository(name: String!): Repository!
  repositories: [Repository!]!
  searchDomain(name: String!): SearchDomain!
  searchDomains: [SearchDomain!]!
  cluster: Cluster!
}

type Mutation {
  addUser(input: AddUserInput!): AddUserMutation!
  addUserV2(input: AddUserInputV2!): userOrPendingUser!
  updateUser(input: UpdateUserInput!): UpdateUserMutation!
  removeUser(input: RemoveUserInput!): RemoveUserMutation!
  "Replaces the API token of user id and returns the new token; root, or the user itself."
  rotateUserApiTokenAndGet(input: RotateUserApiTokenAndGetInput!): String!

  "Retention arguments in milliseconds and bytes, as the product takes them."
  createRepository(name: String!, description: String, retentionInMillis: Long, retentionInIngestSizeBytes: Long, retentionInStorageSizeBytes: Long): CreateRepositoryMutation!
  "Deletes a repository with its data (segments, files, parsers, alerts, tokens)."
  deleteSearchDomain(name: String!, deleteMessage: String): BooleanResultType!
  updateDescriptionForSearchDomain(name: String!, newDescription: String!): UpdateDescriptionMutation!
  addMember(searchDomainName: String!, username: String!, hasMembershipAdminRights: Boolean, hasDeletionRights: Boolean): AddMemberMutation!
  removeMember(searchDomainName: String!, username: String!): RemoveMemberMutation!

  addIngestTokenV3(input: AddIngestTokenV3Input!): IngestToken!
  removeIngestToken(repositoryName: String!, name: String!): BooleanResultType!
  assignParserToIngestTokenV2(input: AssignParserToIngestTokenInputV2!): IngestToken!
  unassignIngestToken(repositoryName: String!, tokenName: String!): UnassignIngestTokenMutation!

  updateIngestPartitionScheme(partitions: [IngestPartitionInput!]!): BooleanResultType!
}

type Account {
  id: String!
  username: String!
  isRoot: Boolean!
  fullName: String
  email: String
  createdAt: DateTime!
}

type User {
  id: String!
  displayName: String!
  username: String!
  isRoot: Boolean!
  fullName: String
  email: String
  picture: String
  company: String
  countryCode: String
  createdAt: DateTime!
}

type PendingUser {
  id: String!
  newUserEmail: String!
}

union userOrPendingUser = User | PendingUser

input AddUserInput {
  username: String!
  isRoot: Boolean
  fullName: String
  firstName: String
  lastName: String
  email: String
  company: String
  countryCode: String
  stateCode: String
  picture: String
}

input AddUserInputV2 {
  username: String!
  isRoot: Boolean
  fullName: String
  firstName: String
  lastName: String
  email: String
  company: String
  countryCode: String
  stateCode: String
  picture: String
  sendInvite: Boolean
  verificationToken: String
  isOrgOwner: Boolean
}

input UpdateUserInput {
  username: String!
  isRoot: Boolean
  fullName: String
  firstName: String
  lastName: String
  email: String
  company: String
  countryCode: String
  stateCode: String
  picture: String
}

input RemoveUserInput {
  username: String!
}

input RotateUserApiTokenAndGetInput {
  id: String!
}

type AddUserMutation {
  user: User!
  clientMutationId: String
}

type UpdateUserMutation {
  user: User!
  clientMutationId: String
}

type RemoveUserMutation {
  user: User!
  clientMutationId: String
}

interface SearchDomain {
  id: String!
  name: String!
  description: String
  automaticSearch: Boolean!
}

enum RepositoryType {
  PERSONAL
  TRIAL
  DEFAULT
  SYSTEM
  MANAGED
}

type Repository implements SearchDomain {
  id: String!
  name: String!
  description: String
  automaticSearch: Boolean!
  type: RepositoryType!
  createdAt: DateTime!
  ingestTokens: [IngestToken!]!
  members: [RepositoryMember!]!
}

type RepositoryMember {
  user: User!
  hasMembershipAdminRights: Boolean!
  hasDeletionRights: Boolean!
}

type CreateRepositoryMutation {
  repository: Repository!
}

type UpdateDescriptionMutation {
  result: Boolean!
}

type AddMemberMutation {
  clientMutationId: String
}

type RemoveMemberMutation {
  clientMutationId: String
}

type Parser {
  id: String!
  name: String!
  isBuiltIn: Boolean!
}

type IngestToken {
  name: String!
  token: String!
  parser: Parser
}

input AddIngestTokenV3Input {
  repositoryName: String!
  name: String!
  parser: String
}

input AssignParserToIngestTokenInputV2 {
  repositoryName: String!
  tokenName: String!
  parser: String!
}

type UnassignIngestTokenMutation {
  result: Boolean!
}

type BooleanResultType {
  result: Boolean!
}

type Cluster {
  nodes: [ClusterNode!]!
  ingestPartitions: [IngestPartition!]!
}

type ClusterNode {
  id: Int!
  name: String!
  uri: String!
  uuid: String!
  isAvailable: Boolean!
  lastHeartbeat: DateTime!
  humioVersion: String!
}

type IngestPartition {
  id: Int!
  nodeIds: [Int!]!
}

input IngestPartitionInput {
  id: Int!
  nodeIds: [Int!]!
}
`;
