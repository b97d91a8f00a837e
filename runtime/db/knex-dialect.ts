// knex's dialect classes, to subclass through knex's public `client` option (`knex({ client: Subclass })`). knex exports
// only its abstract `Client`, not the dialects: each is read from the `client` of a knex made without a connection (no
// pool, no driver connection), once per dialect. Subclasses override only methods in knex's typings (Knex.Client).
import knexFactory, { type Knex } from 'knex';
import { KNEX_LOG } from './knex-log';

/** The knex clients the backends use. */
export type DialectName = 'better-sqlite3' | 'mysql2' | 'pg';

const classes = new Map<DialectName, typeof Knex.Client>();

/** knex's client class for `name`. */
export function knexDialect(name: DialectName): typeof Knex.Client {
  let made = classes.get(name);
  if (!made) {
    const probe = knexFactory({ client: name, useNullAsDefault: true, log: KNEX_LOG });
    made = probe.client.constructor as typeof Knex.Client;
    void probe.destroy();
    classes.set(name, made);
  }
  return made;
}
