// The OAuth endpoints' handlers in one module, which oauth-methods.ts loads at the first OAuth request: they pull in
// @node-oauth/oauth2-server and jose, which a process that never serves OAuth should not hold in memory.
export { authorize } from './authorize-endpoint';
export { introspectToken } from './introspect-endpoint';
export { revokeToken } from './revoke-endpoint';
export { getToken } from './token-endpoint';
export { openidProfile } from './userinfo-endpoint';
