// The public API of doctype-service: what controllers, API modules and embedding apps import.
export { Document } from './document/document';
export { whitelist, type WhitelistOptions, type HttpVerb } from './methods/whitelist';
export type { MethodCall } from './methods/method-call';
export {
  AppError,
  ValidationError,
  MandatoryError,
  LinkValidationError,
  DataError,
  InvalidNameError,
  PermissionError,
  AuthenticationError,
  DoesNotExistError,
  DuplicateEntryError,
  TimestampMismatchError,
} from './errors/errors';
export { createApp, type AppOptions } from './app';
export type { AuthHook, AuthHookRequest } from './auth/auth-hooks';
export { openSite } from './bootstrap';
export { loadConfig, type ServiceConfig, type SiteConfig } from './config/config';
export { HOOKS, type HookName } from './document/hooks';
export type { Site, SessionUser } from './site';
export { and, cond, or, type FilterNode, type FilterOperator } from './query/filter-tree';
export type { HasPermission, PermissionQuery } from './permissions/controller-permission';
export type { PatchContext } from './patches/patch-context';
