// Opens the database named by DATABASE_URL: the table of backends by URL scheme. Adding a backend is adding its folder
// (runtime/db/<backend>/, whose backend.ts exports a Backend) and its line here; nothing else imports a backend folder.
import { DEFAULT_TIMEOUTS, type Backend, type Database, type DatabaseOptions } from './backend';
import { MYSQL } from './mysql/backend';
import { POSTGRES } from './postgres/backend';
import { SQLITE } from './sqlite/backend';

/** What the callers of `connect` use with it (defined with the backend interfaces, backend.ts). */
export { DEFAULT_TIMEOUTS, type Database, type DatabaseOptions, type DatabaseTimeouts } from './backend';

/** Every backend, tried in order against the start of DATABASE_URL. */
export const BACKENDS: readonly Backend[] = [SQLITE, MYSQL, POSTGRES];

/** The backend serving `url`, by its scheme; throws for a URL no backend serves. */
export function backendFor(url: string): Backend {
  const backend = BACKENDS.find((b) => b.schemes.some((scheme) => url.startsWith(scheme)));
  if (!backend) {
    const schemes = BACKENDS.flatMap((b) => b.schemes).join(', ');
    throw new Error(`unsupported DATABASE_URL ${url}: use one of ${schemes}`);
  }
  return backend;
}

/** Opens the database named by `url` (`sqlite:<path>`, `mysql://user:pass@host:port/db` or `postgres://user:pass@host:port/db`). */
export function connect(url: string, options: DatabaseOptions = DEFAULT_TIMEOUTS): Database {
  return backendFor(url).connect(url, options);
}
