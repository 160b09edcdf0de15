export { newApiToken, newIngestToken, newId, tokenDigest, digestsEqual } from './tokens.js';
export { SecretBox } from './secret-box.js';
export { type Principal, isRoot } from './principal.js';
export { Authenticator, parseAuthorization, type Credentials } from './authenticate.js';
export { requireRoot, requireUser, canSeeRepository, canAdminRepository, visibleRepository } from './permissions.js';
