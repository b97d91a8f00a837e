// The statements patches need beyond knex's builders (runtime/patches): renaming and dropping a column, renaming a
// table, and a patch's own SQL with its rows. One implementation per backend (db/<backend>/patch-statements.ts).
import type { Knex } from 'knex';

/** A row of a patch's own SQL, column → value. */
export type PatchRow = Record<string, unknown>;

/** What a backend runs for patches; table and column names are checked by the caller and quoted here. */
export interface PatchStatements {
  /** Renames column `from` of `table` to `to`, keeping its values and type. */
  renameColumn(knex: Knex, table: string, from: string, to: string): Promise<void>;
  /** Drops column `column` of `table` (its indexes must have been dropped). */
  dropColumn(knex: Knex, table: string, column: string): Promise<void>;
  /** Renames table `from` to `to`, rows and columns unchanged. */
  renameTable(knex: Knex, from: string, to: string): Promise<void>;
  /** Runs `sql` with knex bindings (`?` a value, `??` an identifier); the rows it returns (none for a statement without). */
  run(knex: Knex, sql: string, bindings: readonly unknown[]): Promise<PatchRow[]>;
  /**
   * Runs one step of a patch (a ctx call) in the patch's open transaction `knex`, so that a failure the patch catches
   * undoes that step and leaves the transaction usable, as a failed statement does on SQLite and MariaDB (PostgreSQL
   * ends the transaction otherwise: a savepoint there).
   */
  step<T>(knex: Knex, work: () => Promise<T>): Promise<T>;
}
