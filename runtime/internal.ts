// Runtime support imported by generated code (`doctype-service/internal`); not part of the public API.
export type { DocTypeMeta, FieldMeta, PermissionMeta, NamingRule } from './meta/types';
export type { V1Operation, V2Operation, BodyValidator, DocTypeEntry, MethodEntry } from './registry/registry';
export { createRegistry } from './registry/registry';
export { lazyValidator } from './registry/lazy-validator';
export { DOCTYPE_ROWS, type DocTypeRoutes } from './routes/doctype-routes';
export type { BulkResult, BulkFailure } from './operations/bulk-operations';
