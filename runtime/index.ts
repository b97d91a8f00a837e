// The public API of doctype-service: what controllers, API modules and embedding apps import.
export { Document } from './document/document';
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
export { openSite } from './bootstrap';
export { loadConfig, type ServiceConfig, type SiteConfig } from './config/config';
export { HOOKS, type HookName } from './document/hooks';
export type { Site, SessionUser } from './site';
