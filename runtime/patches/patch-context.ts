// What a patch's `execute(ctx)` is given: renames with their data, SQL of its own, and documents through the document
// path (hooks, validation, naming) as Administrator. Each patch runs in one transaction of its own with its Patch Log
// row (Frappe rolls a failed patch back): a knex transaction, whose statements run as long as they take (no
// db_statement_timeout). A patch that throws leaves nothing it wrote, renames included where the database's DDL is
// transactional (SQLite, PostgreSQL); on MariaDB each DDL statement commits what came before it and what follows runs
// outside the transaction.
import type { Knex } from 'knex';
import { Document } from '../document/document';
import { DocumentTransaction } from '../document/lifecycle';
import type { Database } from '../db/backend';
import type { DocData } from '../db/row-store';
import { PatchError } from '../errors/errors';
import type { PatchRow } from '../db/patch-statements';
import type { Site } from '../site';
import { PATCH_USER } from './patch-user';
import { renameDocType } from './rename-doctype';
import { renameField } from './rename-field';

/** The context of one patch run. */
export interface PatchContext {
  /** The site being migrated; its `db.knex` is this patch's transaction. */
  site: Site;
  /** Moves the values of field `from` into the declared field `to` of `doctype` and drops `from`. */
  renameField(doctype: string, from: string, to: string): Promise<void>;
  /** Moves the rows of DocType `from` to the declared DocType `to`, with every value that names it. */
  renameDocType(from: string, to: string): Promise<void>;
  /** Runs SQL with bindings (`?` a value, `??` an identifier); the rows it returns. */
  sql(text: string, bindings?: readonly unknown[]): Promise<PatchRow[]>;
  /** Reads a document (404 DoesNotExistError when missing); change it and pass it to saveDoc. */
  getDoc(doctype: string, name: string): Promise<Document>;
  /** Saves a document from getDoc, or inserts a new one from plain data (`{ doctype, ...fields }`). */
  saveDoc(doc: Document | DocData): Promise<Document>;
}

/** A patch module: `execute(ctx)`, which may return a promise. */
export interface PatchModule {
  execute(ctx: PatchContext): unknown;
}

/**
 * Runs `execute` and then `record` (the Patch Log's row) in one transaction on `site`: committed when both resolve,
 * rolled back when either throws. The document path's work after the commit (afterCommit handlers, the removal of
 * deleted files' bytes) runs once, after it.
 */
export async function runPatch(
  site: Site,
  execute: PatchModule['execute'],
  record: (q: Knex) => Promise<void>,
): Promise<void> {
  const tx = new DocumentTransaction(site, PATCH_USER);
  tx.ignorePermissions = true;
  // Frappe's in_patch: what a patch writes notifies no one outside (webhooks).
  tx.flags.inPatch = true;
  // The patch's transaction is the batch every save of it joins (their run() then finds it open).
  tx.batch = { run: (work) => site.db.knex.transaction((trx) => work(trx)) };
  await tx.run(async () => {
    const q = tx.trx as Knex;
    await execute(patchContext(site, tx, q));
    await record(q);
  });
}

/**
 * `site` as its patch sees it: the same site, whose database's `knex` is the patch's transaction (as Frappe's frappe.db
 * is in a patch), so the patch's own queries through `ctx.site.db.knex` join it instead of waiting for it (SQLite's
 * single write connection) or running beside it.
 */
function siteIn(site: Site, q: Knex): Site {
  const db: Database = Object.create(site.db, { knex: { value: q } });
  return Object.create(site, { db: { value: db } }) as Site;
}

/** The context of one patch on `site`, acting in `tx`, whose open transaction is `q`. */
function patchContext(site: Site, tx: DocumentTransaction, q: Knex): PatchContext {
  // Each call a step: a failure the patch catches undoes that call alone, on every database.
  const step = <T>(work: () => Promise<T>): Promise<T> => site.db.patchStatements.step(q, work);
  return {
    site: siteIn(site, q),
    renameField: (doctype, from, to) => step(() => renameField(site, q, doctype, from, to)),
    renameDocType: (from, to) => step(() => renameDocType(site, q, from, to)),
    sql: (text, bindings = []) => {
      if (typeof text !== 'string' || !text.trim()) throw new PatchError('sql: no statement given');
      return step(() => site.db.patchStatements.run(q, text, bindings));
    },
    getDoc: (doctype, name) => step(() => tx.run(() => tx.getDoc(doctype, name))),
    saveDoc: (doc) =>
      step(() =>
        tx.run(async () => {
          if (doc instanceof Document) return doc.save();
          const { doctype, ...data } = doc;
          if (typeof doctype !== 'string') throw new PatchError('saveDoc: plain data needs its doctype');
          return tx.newDoc(doctype, data, typeof data.name === 'string' ? data.name : undefined).insert();
        }),
      ),
  };
}
