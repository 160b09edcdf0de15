export { newApiToken, newIngestToken, newId, tokenDigest, digestsEqual } from './tokens.js';
export { SecretBox } from './secret-box.js';
export { type Principal, isRoot } from './principal.js';
export { Authenticator, parseAuthorization, type Credentials } from './authenticate.js';
export {
  requireRoot,
  requireUser,
  canSeeRepository,
  canAdminRepository,
  canSeeView,
  canAdminView,
  visibleRepository,
  principalHas,
  userHas,
  userMayRead,
  granting,
  requireRight,
  whoMay,
  type ContentKind,
  type ContentOp,
  type DomainRight,
  type SearchDomainAccess,
} from './permissions.js';
export { VIEW_PERMISSIONS, SYSTEM_PERMISSIONS, ORGANIZATION_PERMISSIONS, type ViewPermission } from './role-permissions.js';
