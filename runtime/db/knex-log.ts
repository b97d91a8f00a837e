// knex's own messages (a stack for each failed pool acquire) go to the debug log: outages log through health.
import { logger } from '../log/logger';

/** The `log` option of every knex the backends open. */
export const KNEX_LOG = {
  warn: (message: unknown) => logger().debug({ knex: String(message) }, 'knex warning'),
  error: (message: unknown) => logger().debug({ knex: String(message) }, 'knex error'),
  deprecate: (message: unknown) => logger().debug({ knex: String(message) }, 'knex deprecation'),
  debug: () => undefined,
};
