export { HealthService, type HealthOptions, type HealthReport } from './health-service.js';
export { renderHealthText, renderHealthJson } from './render.js';
export { formatUptime, worst, type CheckResult, type CheckStatus } from './checks.js';
