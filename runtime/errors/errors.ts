// The one error hierarchy: a base error with an HTTP status and Frappe's exc_type, and one-line subclasses.

/** Base of every error the service answers with; `status` and `excType` decide the response. */
export class AppError extends Error {
  /** HTTP status code. */
  readonly status: number = 500;
  /** Frappe's exception class name, sent as `exc_type`. */
  readonly excType: string = 'AppError';
  /** Extra response headers (Allow, Retry-After, WWW-Authenticate). */
  headers: Record<string, string> = {};
  /** Title shown with the message. */
  title?: string;
  /**
   * Top-level fields of the response body besides the error's, as Frappe's handlers set `frappe.local.response`
   * before they raise (a failed login's `message`).
   */
  response?: Record<string, unknown>;
  constructor(
    message = '',
    options?: {
      cause?: unknown;
      headers?: Record<string, string>;
      title?: string;
      response?: Record<string, unknown>;
    },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    if (options?.headers) this.headers = options.headers;
    if (options?.title) this.title = options.title;
    if (options?.response) this.response = options.response;
  }
}

const define = (excType: string, status: number, base: typeof AppError = AppError) =>
  class extends base {
    override readonly status = status;
    override readonly excType = excType;
  };

/** Invalid input: bad body, bad query parameter, failed validation. */
export class ValidationError extends define('ValidationError', 400) {}
/** A mandatory field is empty after defaults and hooks. */
export class MandatoryError extends define('MandatoryError', 400, ValidationError) {}
/** A Link or Dynamic Link points at a document that does not exist. */
export class LinkValidationError extends define('LinkValidationError', 400, ValidationError) {}
/** A submittable document's Link or Dynamic Link names a cancelled document of a submittable DocType. */
export class CancelledLinkError extends define('CancelledLinkError', 400, LinkValidationError) {}
/** A value has the wrong type or shape for its field, or a query names something it may not. */
export class DataError extends define('DataError', 400, ValidationError) {}
/** A name that may not be used (empty, reserved, special characters), or a Data `Name` field that is not a person's name. */
export class InvalidNameError extends define('InvalidNameError', 400, ValidationError) {}
/** A Data field with options `Email` holds something that is not an email address. */
export class InvalidEmailAddressError extends define('InvalidEmailAddressError', 400, ValidationError) {}
/** A Data field with options `Phone` holds something that is not a phone number. */
export class InvalidPhoneNumberError extends define('InvalidPhoneNumberError', 400, ValidationError) {}
/** docstatus moved in a way Frappe forbids (0→2, 1→0, editing a cancelled document). */
export class DocstatusTransitionError extends define('DocstatusTransitionError', 400, ValidationError) {}
/** A submitted document's field changed that does not allow it. */
export class UpdateAfterSubmitError extends define('UpdateAfterSubmitError', 400, ValidationError) {}
/** A folder (File with is_folder) that still holds files or folders cannot be deleted. */
export class FolderNotEmpty extends define('FolderNotEmpty', 400, ValidationError) {}
/** A document that other documents link to cannot be deleted (Frappe's LinkExistsError, 417 there). */
export class LinkExistsError extends define('LinkExistsError', 400, ValidationError) {}
/** A Deleted Document that was restored already (Frappe's DocumentAlreadyRestored). */
export class DocumentAlreadyRestored extends define('DocumentAlreadyRestored', 400, ValidationError) {}
/** The request body could not be parsed. */
export class BadRequestError extends define('BadRequestError', 400, ValidationError) {}
/** Missing or wrong CSRF token under session authentication. */
export class CSRFTokenError extends define('CSRFTokenError', 400) {}
/** No or invalid credentials. */
export class AuthenticationError extends define('AuthenticationError', 401) {}
/** A malformed Authorization header. */
export class InvalidAuthorizationToken extends define(
  'InvalidAuthorizationToken',
  401,
  AuthenticationError,
) {}
/** Authenticated, but not permitted. */
export class PermissionError extends define('PermissionError', 403) {}
/** A bearer token whose scopes do not cover the endpoint or method (OAuth `insufficient_scope`). */
export class InsufficientScopeError extends define('InsufficientScopeError', 403, PermissionError) {}
/** Unknown DocType, document, route or method. */
export class DoesNotExistError extends define('DoesNotExistError', 404) {}
/** The HTTP verb is not allowed here. */
export class MethodNotAllowedError extends define('MethodNotAllowedError', 405) {}
/** A document with this name, or a unique value, already exists. */
export class DuplicateEntryError extends define('DuplicateEntryError', 409) {}
/** The document changed since the client read it (stale `modified`). */
export class TimestampMismatchError extends define('TimestampMismatchError', 409) {}
/** The request body is over the size limit. */
export class RequestEntityTooLargeError extends define('RequestEntityTooLargeError', 413) {}
/** The request line and headers are larger than the HTTP parser takes (node's 16 KB). */
export class RequestHeaderFieldsTooLargeError extends define('RequestHeaderFieldsTooLargeError', 431) {}
/** The request did not arrive whole within the server's request or headers timeout. */
export class RequestTimeoutError extends define('RequestTimeoutError', 408) {}
/** A `Range` header that asks for bytes past the end of a file (Content-Range says its size). */
export class RangeNotSatisfiableError extends define('RangeNotSatisfiableError', 416) {}
/** The request's content type is not accepted. */
export class UnsupportedMediaTypeError extends define('UnsupportedMediaTypeError', 415) {}
/** An Idempotency-Key sent again with a different request (another body, DocType or API version). */
export class IdempotencyKeyReusedError extends define('IdempotencyKeyReusedError', 422) {}
/** A rate limit or login lockout is in force. */
export class TooManyRequestsError extends define('TooManyRequestsError', 429) {}
/** An unexpected failure; the message is never shown outside developer mode. */
export class InternalServerError extends define('InternalServerError', 500) {}
/** The database or another dependency is unavailable. */
export class ServiceUnavailableError extends define('ServiceUnavailableError', 503) {}

/**
 * A read ran past site config `max_query_time` and was cancelled. 503, not 400: the request is well formed and
 * permitted, and the same query succeeds on a smaller table or a less loaded server; it is the server's limit on its
 * own resources that refused it, and a 5xx keeps such refusals visible in the server's error rates. No Retry-After:
 * sent again unchanged it would most likely take as long (narrow the filters, or page with `cursor`).
 */
export class QueryTimeoutError extends define('QueryTimeoutError', 503) {}
/**
 * A schema change the database cannot take as it is (values that would not convert, duplicates under a new unique
 * index, rows under a naming change): `svc migrate` and `svc serve` stop, naming the field, the rows and the values.
 */
export class SchemaConflictError extends define('SchemaConflictError', 409) {}
/** Schema changes are pending and site config `auto_migrate` is false: `svc serve` refuses to start. */
export class SchemaPendingError extends define('SchemaPendingError', 503) {}
/** A server script failed: a script error, its time, memory, stack or result limit, or an escape it attempted. */
export class ServerScriptError extends define('ServerScriptError', 500) {}
/** Server scripts are switched off (site config `server_script_enabled: false`). */
export class ServerScriptNotEnabled extends define('ServerScriptNotEnabled', 403, PermissionError) {}
/** A patch of patches.txt could not be found or failed: the migration stops there (svc migrate and svc serve exit 1). */
export class PatchError extends define('PatchError', 500) {}
/**
 * An OAuth 2.0 protocol error (RFC 6749 section 5.2, RFC 7009, RFC 7662): rendered as `{error, error_description}`,
 * not Frappe's envelope. `error` is the RFC's code (`invalid_grant`, `invalid_client` ...); the status is 400 unless given.
 */
export class OAuthError extends AppError {
  override readonly status: number;
  override readonly excType = 'OAuthError';
  /** The RFC error code. */
  readonly error: string;
  constructor(
    error = 'invalid_request',
    message = '',
    options?: { status?: number; headers?: Record<string, string>; cause?: unknown },
  ) {
    super(message, options);
    this.error = error;
    this.status = options?.status ?? 400;
  }
}

/** Every error class by exc_type: the documented registry (docs/errors.md is kept in step by a test). */
export const ERROR_CLASSES = {
  ValidationError,
  MandatoryError,
  LinkValidationError,
  CancelledLinkError,
  DataError,
  InvalidNameError,
  InvalidEmailAddressError,
  InvalidPhoneNumberError,
  DocstatusTransitionError,
  UpdateAfterSubmitError,
  FolderNotEmpty,
  LinkExistsError,
  DocumentAlreadyRestored,
  BadRequestError,
  CSRFTokenError,
  AuthenticationError,
  InvalidAuthorizationToken,
  PermissionError,
  InsufficientScopeError,
  DoesNotExistError,
  MethodNotAllowedError,
  DuplicateEntryError,
  TimestampMismatchError,
  RequestEntityTooLargeError,
  RequestHeaderFieldsTooLargeError,
  RequestTimeoutError,
  UnsupportedMediaTypeError,
  RangeNotSatisfiableError,
  IdempotencyKeyReusedError,
  TooManyRequestsError,
  InternalServerError,
  ServiceUnavailableError,
  QueryTimeoutError,
  SchemaConflictError,
  SchemaPendingError,
  ServerScriptError,
  ServerScriptNotEnabled,
  PatchError,
  OAuthError,
} as const;
