export { RedactionService, MAX_ACTIVE_REDACTIONS, MAX_REDACTION_QUERY_CHARS, type RedactionDeps, type RedactionRequest, type RedactionStatus } from './redaction-service.js';
