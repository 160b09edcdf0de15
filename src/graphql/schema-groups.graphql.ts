/**
 * The groups-and-roles part of the GraphQL schema, with the product's names and shapes (humioctl's
 * `groups` and `roles` documents, and the product's mutations for the rest): groups of users, roles
 * with permissions, and roles assigned to groups on repositories and views. What each permission
 * does in logsvc: docs/data-lifecycle.md#groups-and-roles.
 */
import { ORGANIZATION_PERMISSIONS, SYSTEM_PERMISSIONS, VIEW_PERMISSIONS } from '../auth/index.js';

const enumOf = (name: string, values: readonly string[]): string => `enum ${name} {\n${values.map((v) => `  ${v}`).join('\n')}\n}\n`;

export const GROUPS_SDL = /* GraphQL */ `
extend type Query {
  "Groups whose display name contains search (any case), ordered by display name; pages are numbered from 1."
  groupsPage(search: String, pageNumber: Int!, pageSize: Int!): GroupPage!
  group(groupId: String!): Group!
  groupByDisplayName(displayName: String!): Group!
  roles: [Role!]!
  role(roleId: String!): Role!
}

extend type Mutation {
  "Root only."
  addGroup(displayName: String!, lookupName: String): AddGroupMutation!
  "Root only. A field left out keeps its value."
  updateGroup(input: UpdateGroupInput!): UpdateGroupMutation!
  "Root only. The group's users lose what its roles gave them."
  removeGroup(groupId: String!): RemoveGroupMutation!
  "Root only. users: user ids (user names are accepted too)."
  addUsersToGroup(input: AddUsersToGroupInput!): AddUsersToGroupMutation!
  "Root only."
  removeUsersFromGroup(input: RemoveUsersFromGroupInput!): RemoveUsersFromGroupMutation!
  "Root only."
  createRole(input: AddRoleInput!): AddRoleMutation!
  "Root only. Groups that have the role get its new permissions at once."
  updateRole(input: UpdateRoleInput!): UpdateRoleMutation!
  "Root only. Every assignment of the role goes with it."
  removeRole(roleId: String!): BooleanResultType!
  "Root or an administrator of the repository or view (viewId: its id or name). overrideExistingAssignmentsForView (default true): the group's other roles there go."
  assignRoleToGroup(input: AssignRoleToGroupInput!): AssignRoleToGroupMutation!
  unassignRoleFromGroup(input: RemoveRoleFromGroupInput!): UnassignRoleFromGroup!
}

type PageType {
  number: Int!
  totalNumberOfRows: Int!
  total: Int!
}

type Group {
  id: String!
  displayName: String!
  lookupName: String
  userCount: Int!
  users: [User!]!
  "The repositories and views the group has roles on."
  searchDomainCount: Int!
  roles: [SearchDomainRole!]!
  searchDomainRoles(searchDomainId: String): [SearchDomainRole!]!
  searchDomainRolesBySearchDomainName(searchDomainName: String!): [SearchDomainRole!]!
}

type GroupPage {
  pageInfo: PageType!
  page: [Group!]!
}

type SearchDomainRole {
  searchDomain: SearchDomain!
  role: Role!
}

type Role {
  id: String!
  displayName: String!
  color: String
  description: String
  viewPermissions: [Permission!]!
  "Stored and shown; logsvc has no system roles."
  systemPermissions: [SystemPermission!]!
  "Stored and shown; logsvc has no organization roles."
  organizationPermissions: [OrganizationPermission!]!
  groupsCount: Int!
  usersCount: Int!
  users: [User!]!
  groups: [Group!]!
}

input UpdateGroupInput {
  groupId: String!
  displayName: String
  lookupName: String
}

input AddUsersToGroupInput {
  users: [String!]!
  groupId: String!
}

input RemoveUsersFromGroupInput {
  users: [String!]!
  groupId: String!
}

input AddRoleInput {
  displayName: String!
  viewPermissions: [Permission!]!
  color: String
  systemPermissions: [SystemPermission!]
  organizationPermissions: [OrganizationPermission!]
}

input UpdateRoleInput {
  roleId: String!
  displayName: String!
  viewPermissions: [Permission!]!
  description: String
  color: String
  systemPermissions: [SystemPermission!]
  organizationPermissions: [OrganizationPermission!]
}

input AssignRoleToGroupInput {
  viewId: String!
  groupId: String!
  roleId: String!
  overrideExistingAssignmentsForView: Boolean
}

input RemoveRoleFromGroupInput {
  viewId: String!
  groupId: String!
  roleId: String!
}

type AddGroupMutation {
  group: Group!
}

type UpdateGroupMutation {
  group: Group!
}

type RemoveGroupMutation {
  group: Group!
}

type AddUsersToGroupMutation {
  group: Group!
}

type RemoveUsersFromGroupMutation {
  group: Group!
}

type AddRoleMutation {
  role: Role!
}

type UpdateRoleMutation {
  role: Role!
}

type AssignRoleToGroupMutation {
  group: SearchDomainRole!
}

type UnassignRoleFromGroup {
  group: Group!
}

${enumOf('Permission', VIEW_PERMISSIONS)}
${enumOf('SystemPermission', SYSTEM_PERMISSIONS)}
${enumOf('OrganizationPermission', ORGANIZATION_PERMISSIONS)}
`;
