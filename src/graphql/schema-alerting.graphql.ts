/**
 * The alerting part of the GraphQL schema (api-facts §5.2, §5.3, Appendix B): alerts and actions on
 * search domains, their create/update/delete mutations, with the product's type, field and input
 * names (what humioctl sends). Written as extensions of the base schema's types.
 */
export const ALERTING_SDL = /* GraphQL */ `
extend interface SearchDomain {
  alerts: [Alert!]!
  alert(id: String!): Alert!
  actions(actionIds: [String!]): [Action!]!
  action(id: String!): Action!
}

extend type Repository {
  alerts: [Alert!]!
  alert(id: String!): Alert!
  actions(actionIds: [String!]): [Action!]!
  action(id: String!): Action!
}

extend type Mutation {
  createAlert(input: CreateAlert!): Alert!
  updateAlert(input: UpdateAlert!): Alert!
  "Deletes an alert by id, or by name when that names exactly one alert (humioctl sends the name)."
  deleteAlert(input: DeleteAlert!): Boolean!

  createWebhookAction(input: CreateWebhookAction!): WebhookAction!
  createSlackAction(input: CreateSlackAction!): SlackAction!
  "Needs an SMTP server in the node config ([alerts] smtp_host)."
  createEmailAction(input: CreateEmailAction!): EmailAction!
  "Re-ingests the alert's result events through the ingest token, with @trigger.* fields."
  createHumioRepoAction(input: CreateHumioRepoAction!): HumioRepoAction!
  createPagerDutyAction(input: CreatePagerDutyAction!): PagerDutyAction!
  createOpsGenieAction(input: CreateOpsGenieAction!): OpsGenieAction!
  createVictorOpsAction(input: CreateVictorOpsAction!): VictorOpsAction!
  "Not built: fails with a message naming the alternative (createSlackAction)."
  createSlackPostMessageAction(input: CreateSlackPostMessageAction!): SlackPostMessageAction!
  "Not built: fails with a message saying so."
  createUploadFileAction(input: CreateUploadFileAction!): UploadFileAction!
  "Deletes an action; alerts that used it no longer invoke it."
  deleteAction(input: DeleteAction!): Boolean!
}

enum QueryOwnershipType {
  User
  Organization
}

interface QueryOwnership {
  id: String!
}

type UserOwnership implements QueryOwnership {
  id: String!
  user: User
}

type OrganizationOwnership implements QueryOwnership {
  id: String!
}

type Alert {
  id: String!
  name: String!
  displayName: String!
  description: String
  queryString: String!
  queryStart: String!
  throttleTimeMillis: Long!
  throttleField: String
  "Epoch milliseconds of the last trigger."
  timeOfLastTrigger: Long
  enabled: Boolean!
  "Action ids, in the order they run."
  actions: [String!]!
  actionsV2: [Action!]!
  "The problem of the last evaluation (query failure, failed action), null once a trigger ran cleanly."
  lastError: String
  lastWarnings: [String!]!
  labels: [String!]!
  isStarred: Boolean!
  queryOwnership: QueryOwnership!
  runAsUser: User
}

interface Action {
  id: String!
  name: String!
  displayName: String!
}

type HttpHeaderEntry {
  header: String!
  value: String!
}

type SlackFieldEntry {
  fieldName: String!
  value: String!
}

type WebhookAction implements Action {
  id: String!
  name: String!
  displayName: String!
  method: String!
  url: String!
  headers: [HttpHeaderEntry!]!
  bodyTemplate: String!
  ignoreSSL: Boolean!
  useProxy: Boolean!
}

type SlackAction implements Action {
  id: String!
  name: String!
  displayName: String!
  url: String!
  fields: [SlackFieldEntry!]!
  useProxy: Boolean!
}

type EmailAction implements Action {
  id: String!
  name: String!
  displayName: String!
  recipients: [String!]!
  subjectTemplate: String
  bodyTemplate: String
  useProxy: Boolean!
  attachCsv: Boolean!
}

type HumioRepoAction implements Action {
  id: String!
  name: String!
  displayName: String!
  ingestToken: String!
}

type PagerDutyAction implements Action {
  id: String!
  name: String!
  displayName: String!
  severity: String!
  routingKey: String!
  useProxy: Boolean!
}

type OpsGenieAction implements Action {
  id: String!
  name: String!
  displayName: String!
  apiUrl: String!
  genieKey: String!
  useProxy: Boolean!
}

type VictorOpsAction implements Action {
  id: String!
  name: String!
  displayName: String!
  messageType: String!
  notifyUrl: String!
  useProxy: Boolean!
}

# The action types below are not built: they are declared so that clients' fragments validate
# (humioctl's ActionDetails spreads "... on SlackPostMessageAction", "... on UploadFileAction" and
# "... on S3Action"); no action of these types is ever stored or returned.

type SlackPostMessageAction implements Action {
  id: String!
  name: String!
  displayName: String!
  apiToken: String!
  channels: [String!]!
  fields: [SlackFieldEntry!]!
  useProxy: Boolean!
}

type UploadFileAction implements Action {
  id: String!
  name: String!
  displayName: String!
  fileName: String!
}

enum S3ActionEventOutputFormat {
  CSV
  NDJSON
}

type S3Action implements Action {
  id: String!
  name: String!
  displayName: String!
  roleArn: String!
  awsRegion: String!
  bucketName: String!
  fileName: String!
  outputFormat: S3ActionEventOutputFormat!
  outputMetadata: Boolean!
  useProxy: Boolean!
}

input CreateSlackPostMessageAction {
  viewName: String!
  name: String!
  apiToken: String!
  channels: [String!]!
  fields: [SlackFieldEntryInput!]!
  useProxy: Boolean!
}

input CreateUploadFileAction {
  viewName: String!
  name: String!
  fileName: String!
}

input HttpHeaderEntryInput {
  header: String!
  value: String!
}

input SlackFieldEntryInput {
  fieldName: String!
  value: String!
}

input CreateWebhookAction {
  viewName: String!
  name: String!
  url: String!
  method: String!
  headers: [HttpHeaderEntryInput!]!
  bodyTemplate: String!
  ignoreSSL: Boolean!
  useProxy: Boolean!
}

input CreateSlackAction {
  viewName: String!
  name: String!
  url: String!
  fields: [SlackFieldEntryInput!]!
  useProxy: Boolean!
}

input CreateEmailAction {
  viewName: String!
  name: String!
  recipients: [String!]!
  subjectTemplate: String
  bodyTemplate: String
  useProxy: Boolean!
  attachCsv: Boolean
}

input CreateHumioRepoAction {
  viewName: String!
  name: String!
  ingestToken: String!
}

input CreatePagerDutyAction {
  viewName: String!
  name: String!
  severity: String!
  routingKey: String!
  useProxy: Boolean!
}

input CreateOpsGenieAction {
  viewName: String!
  name: String!
  apiUrl: String!
  genieKey: String!
  useProxy: Boolean!
}

input CreateVictorOpsAction {
  viewName: String!
  name: String!
  messageType: String!
  notifyUrl: String!
  useProxy: Boolean!
}

input DeleteAction {
  viewName: String!
  id: String!
}

input CreateAlert {
  viewName: String!
  name: String!
  description: String
  queryString: String!
  queryStart: String!
  throttleTimeMillis: Long!
  throttleField: String
  runAsUserId: String
  enabled: Boolean
  actions: [String!]!
  labels: [String!]
  queryOwnershipType: QueryOwnershipType
}

input UpdateAlert {
  viewName: String!
  id: String!
  name: String!
  description: String
  queryString: String!
  queryStart: String!
  throttleTimeMillis: Long!
  throttleField: String
  runAsUserId: String
  enabled: Boolean!
  actions: [String!]!
  labels: [String!]!
  queryOwnershipType: QueryOwnershipType
}

input DeleteAlert {
  viewName: String!
  id: String!
}
`;
