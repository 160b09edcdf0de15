/**
 * Alerts and actions: definitions (AlertService, ActionService), the scheduler that evaluates
 * alerts and runs their actions, and the outbound side (address policy, HTTP via undici, SMTP via
 * nodemailer, message templates).
 */
export { AlertService, type AlertView, type AlertServiceOptions } from './alert-service.js';
export { ActionService, type ActionView, type ActionServiceOptions } from './action-service.js';
export { REST_FIELDS, GRAPHQL_FIELDS, type AlertInput, type FieldNames } from './alert-input.js';
export { type ActionProperties, WEBHOOK_METHODS, PAGERDUTY_SEVERITIES, VICTOROPS_MESSAGE_TYPES } from './action-input.js';
export { AlertScheduler, type SchedulerSettings } from './scheduler.js';
export { ActionDispatcher, type Reingest, type RetryPolicy } from './actions/dispatcher.js';
export { TargetPolicy } from './target-policy.js';
export { OutboundHttp } from './outbound-http.js';
export { SmtpMailer, type Mailer } from './smtp.js';
export { renderTemplate } from './template.js';
export { isAlertRunner, publishAlertNode } from './runner.js';
