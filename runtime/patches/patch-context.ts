// What a patch's `execute(ctx)` is given: renames with their data, SQL of its own, and documents through the document
// path (hooks, validation, naming) as Administrator. Each patch gets its own context.
import { Document } from '../document/document';
import { DocumentTransaction } from '../document/lifecycle';
import type { DocData } from '../db/row-store';
import { PatchError } from '../errors/errors';
import type { PatchRow } from '../db/patch-statements';
import type { Site } from '../site';
import { PATCH_USER } from './patch-user';
import { renameDocType } from './rename-doctype';
import { renameField } from './rename-field';

/** The context of one patch run. */
export interface PatchContext {
  /** The site being migrated. */
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

/** The context of one patch on `site`. */
export function createPatchContext(site: Site): PatchContext {
  const tx = new DocumentTransaction(site, PATCH_USER);
  tx.ignorePermissions = true;
  // Frappe's in_patch: what a patch writes notifies no one outside (webhooks).
  tx.flags.inPatch = true;
  return {
    site,
    renameField: (doctype, from, to) => renameField(site, doctype, from, to),
    renameDocType: (from, to) => renameDocType(site, from, to),
    sql: (text, bindings = []) => {
      if (typeof text !== 'string' || !text.trim()) throw new PatchError('sql: no statement given');
      return site.db.patchStatements.run(site.db.knex, text, bindings);
    },
    getDoc: (doctype, name) => tx.run(() => tx.getDoc(doctype, name)),
    saveDoc: (doc) =>
      tx.run(async () => {
        if (doc instanceof Document) return doc.save();
        const { doctype, ...data } = doc;
        if (typeof doctype !== 'string') throw new PatchError('saveDoc: plain data needs its doctype');
        return tx.newDoc(doctype, data, typeof data.name === 'string' ? data.name : undefined).insert();
      }),
  };
}
