// The document lifecycle: insert, save and delete with Frappe's hook order, inside one transaction per request.
import type { Knex } from 'knex';
import { isDeadlockError } from '../db/unavailable';
import { inWriteTransaction, type WriteBatch } from '../db/write-transaction';
import {
  DocstatusTransitionError,
  DoesNotExistError,
  PermissionError,
  TimestampMismatchError,
  UpdateAfterSubmitError,
  ValidationError,
} from '../errors/errors';
import { isTableType, storesValue } from '../meta/field-types';
import type { FieldMeta } from '../meta/types';
import type { DocTypeBinding } from '../registry/registry';
import type { SessionUser, Site } from '../site';
import { Document, attachSession } from './document';
import {
  lifecycleOf,
  runHandlers,
  type DeleteOperation,
  type ExtensionTable,
  type SaveOperation,
  type WritingSave,
} from './extension-points';
import { AFTER_WRITE, BEFORE_WRITE, runHook, type HookName, type SaveAction } from './hooks';
import { amendedName } from './amend';
import { copyValue } from './copy-value';
import {
  applyDefaults,
  checkLinks,
  checkMandatory,
  checkUnique,
  fillStoredValues,
  normalizeValues,
} from './checks';
import { checkDataOptions } from './data-options';
import { checkLinksFirst, hasLinks, linkValues, linksMoved } from './links-first';
import { fieldLists, tableFields } from '../registry/field-lists';
import { checkName, defaultNamingSeries, hashName, makeName } from './naming';
import type { DocumentSession } from './session';
import { writeSingle } from '../db/document-rows';
import { type DocData } from '../db/row-store';
import { formatDatetime, now } from '../db/stored-values';

/**
 * A copy of document data that takes new properties cheaply. V8 gives a `{ ...spread }` copy a map that each added
 * property replaces at a cost of microseconds (the write fills every stored field); Object.assign onto a literal
 * does not. Only for data whose own keys came through validation or the lifecycle: Object.assign would run the
 * `__proto__` setter for an own `__proto__` key, which raw JSON bodies may carry.
 */
function copyData(data: object): DocData {
  return Object.assign({}, data) as DocData;
}

/** Per-document state the lifecycle keeps outside the document's own properties. */
interface DocState {
  binding: DocTypeBinding;
  isNew: boolean;
  /** The stored data as loaded (undefined for new documents). */
  stored?: DocData;
  /** A name the client supplied and may use. */
  clientName?: string;
  /** The run (transaction) in which `stored` was read under a row lock (or written): it is current there, no re-read needed. */
  lockedIn?: number;
}

/** Marks on a transaction written by an import, a patch or a migration (webhooks do not fire for them). */
export interface TransactionFlags {
  inImport?: boolean;
  inPatch?: boolean;
  inMigrate?: boolean;
}

/** A request's unit of work: creates documents bound to it and writes them through the lifecycle. */
export class DocumentTransaction implements DocumentSession {
  readonly messages: string[] = [];
  trx?: Knex;
  /** Skip the user's permission checks (writes the service makes on its own behalf). */
  ignorePermissions = false;
  /** What kind of operation writes (Frappe's `frappe.flags.in_import` …): features that notify the outside skip these. */
  readonly flags: TransactionFlags = {};
  /** The batch whose transaction this one is a savepoint of (bulk items on MariaDB), if any. */
  batch?: WriteBatch;
  /** DocTypes written in this transaction: the afterTransaction handlers registered for them run at its end. */
  private readonly written = new Set<string>();
  /** The documents written in this transaction, for the afterCommit handlers (those with none are not kept). */
  private writes: (WritingSave | DeleteOperation)[] = [];
  private readonly states = new WeakMap<Document, DocState>();
  /** Counts the transactions this request ran; the current one's number while `trx` is open. */
  private runs = 0;
  /** Work to do once the transaction has committed (removing the bytes of deleted files); dropped on rollback. */
  private committed: (() => Promise<void>)[] = [];

  /** `joined`: an open transaction this one acts in (actingAs), sharing its messages, writes and commit work. */
  constructor(
    readonly site: Site,
    readonly user: SessionUser,
    joined?: DocumentTransaction,
  ) {
    if (!joined) return;
    this.trx = joined.trx;
    if (joined.batch) this.batch = joined.batch;
    this.runs = joined.runs;
    // Shared, not copied: what this one writes is committed, handled and reported with the joined transaction.
    this.messages = joined.messages;
    this.written = joined.written;
    this.writes = joined.writes;
    this.committed = joined.committed;
  }

  /**
   * Runs `work` inside one database transaction; any error rolls everything back. `grouped`: the work inserts a new
   * document, and on MariaDB may share its transaction with other such works (db/mysql/group-commit.ts).
   */
  async run<T>(work: () => Promise<T>, grouped = false, restore?: () => void): Promise<T> {
    if (this.trx) return work();
    this.committed = [];
    this.writes = [];
    // A grouped work may run twice on MariaDB (its batch rolled back, it runs again alone): each run starts from what
    // the request had before the first, as the rolled-back transaction does (`restore` puts back what `work` changes).
    const messages = this.messages.length;
    let attempts = 0;
    let result: T;
    try {
      result = await inWriteTransaction(
        this.site.db,
        async (trx) => {
          if (attempts++ > 0) {
            this.committed = [];
            this.writes = [];
            this.messages.length = messages;
            restore?.();
          }
          this.trx = trx;
          this.runs++;
          try {
            return await work();
          } finally {
            this.trx = undefined;
          }
        },
        this.batch,
        grouped,
      );
      const writes = this.writes;
      this.writes = [];
      for (const op of writes) {
        const pending = runHandlers(this.extensions(op.binding).afterCommit, op, undefined);
        if (pending) await pending;
      }
    } finally {
      this.writes = [];
      // Committed or not: a request that read the rows in between must not keep them cached.
      if (this.written.size) {
        const written = new Set(this.written);
        this.written.clear();
        for (const handler of lifecycleOf(this.site).afterTransaction(written)) await handler(this, written);
      }
    }
    // Reached only after the commit: a rollback threw above (and the next run starts with a fresh list).
    const tasks = this.committed;
    this.committed = [];
    for (const task of tasks) await task().catch(() => undefined);
    return result;
  }

  /**
   * Runs `work` as `run` does, and once more in a new transaction when the database rolled the first back as the victim
   * of a deadlock (two writes locking the same rows in opposite orders: a save locks its document, then the documents
   * its Links name). For works that read what they change inside the transaction (an update, a delete, a docstatus
   * move), so the second run starts from the rows as they are then. Not retried: inside an open transaction or a bulk
   * batch (which handle it themselves), or when the first run used half of db_statement_timeout (the request's time).
   */
  async runRetryingDeadlock<T>(work: () => Promise<T>): Promise<T> {
    if (this.trx || this.batch) return this.run(work);
    const started = Date.now();
    const messages = this.messages.length;
    try {
      return await this.run(work);
    } catch (err) {
      const spent = Date.now() - started;
      if (
        !isDeadlockError(err, this.site.db.errors) ||
        spent * 2 > this.site.config.site.db_statement_timeout
      )
        throw err;
      this.messages.length = messages;
      return this.run(work);
    }
  }

  /**
   * Runs `task` after the current transaction commits (never when it rolls back), after the afterCommit handlers; a
   * failing task is ignored (the removal of a deleted file's bytes).
   */
  afterCommit(task: () => Promise<void>): void {
    this.committed.push(task);
  }

  /**
   * This open transaction as `user` acts in it: the same database transaction, messages, written documents and work
   * after the commit, with `user`'s permissions (a Server Script's calls, run as its author). Only while it is open.
   */
  actingAs(user: SessionUser): DocumentTransaction {
    if (user === this.user) return this;
    if (!this.trx) throw new Error('actingAs needs an open transaction');
    return new DocumentTransaction(this.site, user, this);
  }

  /** Notes that this transaction wrote rows of `doctype` (beside its documents): its afterTransaction handlers run. */
  markWritten(doctype: string): void {
    this.written.add(doctype);
  }

  /** The extension handlers that apply to the DocType of `binding` (runtime/features.ts registers them). */
  private extensions(binding: DocTypeBinding): ExtensionTable {
    return lifecycleOf(this.site).of(binding.meta.name);
  }

  private binding(doctype: string): DocTypeBinding {
    const binding = this.site.registry.get(doctype);
    if (!binding) throw new DoesNotExistError(`DocType ${doctype} not found`);
    return binding;
  }

  /** Builds a document object of the DocType's controller class (or Document) holding `data`. */
  instantiate(binding: DocTypeBinding, data: DocData, state: Omit<DocState, 'binding'>): Document {
    const Controller = (binding.controller?.default as typeof Document | undefined) ?? Document;
    const doc = new Controller();
    Object.assign(doc, data);
    doc.doctype = binding.meta.name;
    attachSession(doc, this);
    this.states.set(doc, { binding, ...state });
    return doc;
  }

  /** A new, unsaved document with defaults applied. `clientName` is a name the client may choose. */
  newDoc(doctype: string, data: DocData, clientName?: string): Document {
    const binding = this.binding(doctype);
    const values = copyData(data);
    applyDefaults(binding.meta, values, this.user.name);
    return this.instantiate(binding, values, {
      isNew: true,
      ...(clientName !== undefined ? { clientName } : {}),
    });
  }

  /** Loads a stored document; 404 when it does not exist. */
  async getDoc(doctype: string, name: string, options: { forUpdate?: boolean } = {}): Promise<Document> {
    const binding = this.binding(doctype);
    const data = this.trx
      ? await this.site.rows.load(this.trx, binding, name, { forUpdate: options.forUpdate === true })
      : await this.site.rows.read(binding, name);
    if (!data) throw new DoesNotExistError(`${doctype} ${name} not found`);
    const lockedIn = options.forUpdate && this.trx ? this.runs : undefined;
    return this.instantiate(binding, data, {
      isNew: false,
      stored: copyValue(data),
      ...(lockedIn !== undefined ? { lockedIn } : {}),
    });
  }

  isNew(doc: Document): boolean {
    return this.states.get(doc)?.isNew ?? true;
  }

  private state(doc: Document): DocState {
    const state = this.states.get(doc);
    if (!state) throw new Error('document is not bound to this request');
    return state;
  }

  /** Data of the document as plain values (own enumerable properties). */
  private data(doc: Document): DocData {
    return copyData(doc);
  }

  private saveAction(binding: DocTypeBinding, before: number, after: number, isNew: boolean): SaveAction {
    const submittable = binding.meta.isSubmittable;
    if (isNew) {
      if (after === 0) return 'insert';
      if (after === 1 && submittable) return 'submit';
      throw new DocstatusTransitionError(`Cannot create a ${binding.meta.name} with docstatus ${after}`);
    }
    if (before === 0 && after === 0) return 'save';
    if (before === 0 && after === 1 && submittable) return 'submit';
    if (before === 1 && after === 1) return 'update_after_submit';
    if (before === 1 && after === 2) return 'cancel';
    if (before === 2) throw new DocstatusTransitionError('Cannot edit cancelled document');
    throw new DocstatusTransitionError(`Cannot change docstatus from ${before} to ${after}`);
  }

  /** Inserts or saves the document: hooks in Frappe's order, checks, then the write. */
  async save(doc: Document): Promise<void> {
    const inserting = this.states.get(doc)?.isNew === true;
    // A grouped insert may run twice (see run): the second starts from the document as the caller gave it.
    const restore = inserting && !this.trx ? this.restorer(doc) : undefined;
    const write = async () => {
      const state = this.state(doc);
      const trx = this.trx as Knex;
      const { binding } = state;
      const registry = this.site.registry;
      const stamp = now();
      const docstatus = Number(doc.docstatus ?? 0);
      if (![0, 1, 2].includes(docstatus)) throw new ValidationError('docstatus must be 0, 1 or 2');
      let stored = state.stored;
      if (!state.isNew) {
        const fresh =
          state.lockedIn === this.runs && state.stored
            ? state.stored
            : await this.site.rows.load(trx, binding, doc.name, { forUpdate: true });
        if (!fresh) throw new DoesNotExistError(`${binding.meta.name} ${doc.name} not found`);
        if (doc.modified && formatDatetime(String(doc.modified)) !== fresh.modified) {
          throw new TimestampMismatchError(
            `Error: ${doc.name} (${binding.meta.name}) has been modified after you have opened it (${String(fresh.modified)}, ${String(doc.modified)}). Please refresh to get the latest document.`,
          );
        }
        stored = fresh;
      }
      const action = this.saveAction(binding, Number(stored?.docstatus ?? 0), docstatus, state.isNew);
      if (action === 'update_after_submit' && stored) this.checkUpdateAfterSubmit(binding, doc, stored);
      const points = this.extensions(binding);
      const op: SaveOperation = {
        kind: 'save',
        tx: this,
        trx,
        binding,
        doc,
        action,
        isNew: state.isNew,
        stored,
      };
      let pending: Promise<void> | undefined;
      if (!this.ignorePermissions && (pending = runHandlers(points.authorizeSave, op, undefined)))
        await pending;
      if ((pending = runHandlers(points.beforeSave, op, undefined))) await pending;
      if (state.isNew) {
        if ((pending = this.hook(points, op, 'before_insert'))) await pending;
        await runHook(doc, 'before_naming');
        // As Frappe's set_name_by_naming_series: the series used is also stored in the (usually mandatory) field.
        if (binding.meta.naming.kind === 'naming_series' && !doc.naming_series)
          doc.naming_series = defaultNamingSeries(binding.meta);
        if ((pending = runHandlers(points.chooseName, op, undefined))) await pending;
        doc.name = op.name ?? (await this.newName(binding, doc, state.clientName));
        doc.owner = this.user.name;
        doc.creation = stamp;
        doc.idx = Number(doc.idx ?? 0);
      } else if (stored) {
        doc.owner = stored.owner as string;
        doc.creation = stored.creation as string;
        doc.name = stored.name as string;
      }
      doc.modified = stamp;
      doc.modified_by = this.user.name;
      doc.docstatus = docstatus as 0 | 1 | 2;
      this.prepareChildren(binding, doc, stamp);
      // Links before the validate hooks, as Frappe's: the hooks see the fetched values (links-first.ts).
      const linksChecked =
        action !== 'cancel' && !op.ignoreLinks && hasLinks(binding.meta, registry)
          ? await checkLinksFirst(this.site.rows, trx, binding, registry, doc, {
              restriction: op.linkRestriction,
              stored,
            })
          : undefined;
      for (const hook of BEFORE_WRITE[action]) if ((pending = this.hook(points, op, hook))) await pending;
      const data = this.data(doc);
      const writing = op as WritingSave;
      writing.data = data;
      if (action !== 'cancel') {
        if ((pending = runHandlers(points.validateSave, writing, undefined))) await pending;
        normalizeValues(binding.meta, data);
        for (const { field, child } of tableFields(binding.meta, registry))
          for (const row of (data[field.fieldname] as DocData[] | undefined) ?? [])
            normalizeValues(child.meta, row);
        // Again only for Links the hooks changed (as the first check, before the mandatory one: a mandatory field may
        // be one the Link check fetches).
        if (linksChecked && linksMoved(linksChecked, linkValues(binding.meta, registry, data)))
          await checkLinks(this.site.rows, trx, binding, registry, data, {
            restriction: op.linkRestriction,
            stored,
          });
        checkMandatory(binding, registry, data);
        checkDataOptions(fieldLists(binding.meta).dataOptions, data, doc.owner);
        for (const { field, child } of tableFields(binding.meta, registry))
          for (const row of (data[field.fieldname] as DocData[] | undefined) ?? [])
            checkDataOptions(fieldLists(child.meta).dataOptions, row, doc.owner);
        if ((pending = runHandlers(points.checkValues, writing, undefined))) await pending;
        await checkUnique(this.site.rows, trx, binding, data);
      }
      // The response shows what the row holds: unset fields as their column default (both versions agree with a later GET).
      fillStoredValues(binding.meta, data);
      for (const { field, child } of tableFields(binding.meta, registry))
        for (const row of (data[field.fieldname] as DocData[] | undefined) ?? [])
          fillStoredValues(child.meta, row);
      if ((pending = runHandlers(points.beforeWrite, writing, undefined))) await pending;
      if (binding.meta.issingle) await writeSingle(trx, binding, data, registry);
      else if (state.isNew) await this.site.rows.insert(trx, binding, data);
      else await this.site.rows.update(trx, binding, data, stored as DocData);
      if ((pending = runHandlers(points.afterWrite, writing, undefined))) await pending;
      Object.assign(doc, data);
      state.isNew = false;
      state.stored = copyValue(data);
      state.lockedIn = this.runs;
      for (const hook of AFTER_WRITE[action]) if ((pending = this.hook(points, op, hook))) await pending;
      this.written.add(binding.meta.name);
      if (points.afterCommit.length) this.writes.push(writing);
    };
    await this.run(write, inserting, restore);
  }

  /** Puts `doc` (its own fields and its lifecycle state) back as it is now. */
  private restorer(doc: Document): () => void {
    const data = copyValue(this.data(doc));
    const state = { ...this.state(doc) };
    return () => {
      for (const key of Object.keys(doc)) if (!Object.hasOwn(data, key)) delete doc[key];
      Object.assign(doc, copyValue(data));
      this.states.set(doc, { ...state });
    };
  }

  /**
   * Runs the controller's `hook`, then the docEvent handlers (Server Scripts' DocType Events: Frappe's order). Undefined
   * when neither had to wait: a create passes six hooks, and most DocTypes define none of them, so no promise is made.
   */
  private hook(
    points: ExtensionTable,
    op: SaveOperation | DeleteOperation,
    hook: HookName,
  ): Promise<void> | undefined {
    if (typeof op.doc[hook] === 'function') return this.hookAndEvents(points, op, hook);
    return runHandlers(points.docEvent, op, hook);
  }

  private async hookAndEvents(
    points: ExtensionTable,
    op: SaveOperation | DeleteOperation,
    hook: HookName,
  ): Promise<void> {
    await runHook(op.doc, hook);
    const events = runHandlers(points.docEvent, op, hook);
    if (events) await events;
  }

  /** The client's name when it may choose one, else the controller's `autoname`, else the DocType's naming rule. */
  private async newName(
    binding: DocTypeBinding,
    doc: Document,
    clientName: string | undefined,
  ): Promise<string> {
    const trx = this.trx as Knex;
    if (binding.fieldMap.has('amended_from') && typeof doc.amended_from === 'string' && doc.amended_from) {
      return amendedName(trx, binding, doc.amended_from);
    }
    // makeName only reads the fields (a naming rule's): the document is given as it is, not copied.
    if (clientName !== undefined) return makeName(this.site.rows, trx, binding.meta, doc, clientName);
    const autoname = (doc as { autoname?: () => unknown }).autoname;
    if (typeof autoname === 'function' && !binding.meta.issingle) {
      await autoname.call(doc);
      if (doc.name) return checkName(binding.meta, doc.name);
    }
    return makeName(this.site.rows, trx, binding.meta, doc, undefined);
  }

  /** Child rows: parent fields always set from the parent (never from the body), idx by position, new rows named. */
  private prepareChildren(binding: DocTypeBinding, doc: Document, stamp: string): void {
    for (const field of fieldLists(binding.meta).tables) {
      const rows = doc[field.fieldname] as DocData[] | undefined;
      if (rows === undefined) continue;
      if (!Array.isArray(rows)) throw new ValidationError(`${field.label} must be a list of rows`);
      // The stored rows by name: a kept row keeps its name and its creation, whether the body sent it or not.
      const previous = new Map(
        ((this.state(doc).stored?.[field.fieldname] as DocData[] | undefined) ?? []).map((r) => [
          String(r.name),
          r,
        ]),
      );
      doc[field.fieldname] = rows.map((row, i) => ({
        ...row,
        name: row.name && previous.has(String(row.name)) ? row.name : hashName(),
        parent: doc.name,
        parentfield: field.fieldname,
        parenttype: binding.meta.name,
        idx: i + 1,
        docstatus: doc.docstatus,
        owner: doc.owner,
        creation: (row.name && previous.get(String(row.name))?.creation) || stamp,
        modified: stamp,
        modified_by: this.user.name,
        doctype: field.options,
      }));
    }
  }

  private checkUpdateAfterSubmit(binding: DocTypeBinding, doc: Document, stored: DocData): void {
    for (const field of binding.meta.fields) {
      // An allow_on_submit table takes new rows and loses rows; its kept rows change only in allow_on_submit fields
      // (Frappe's validate_update_after_submit skips new rows of such a table only).
      if (field.allowOnSubmit && isTableType(field.fieldtype)) {
        if (!this.sameKeptRows(field, doc[field.fieldname], stored[field.fieldname]))
          throw new UpdateAfterSubmitError(`Not allowed to change ${field.label} rows after submission`);
        continue;
      }
      if (field.allowOnSubmit) continue;
      if (isTableType(field.fieldtype)) {
        if (!this.sameRows(field, doc[field.fieldname], stored[field.fieldname])) {
          throw new UpdateAfterSubmitError(`Not allowed to change ${field.label} after submission`);
        }
        continue;
      }
      const before = stored[field.fieldname] ?? null;
      const after = doc[field.fieldname] ?? null;
      if (JSON.stringify(before) !== JSON.stringify(after)) {
        throw new UpdateAfterSubmitError(`Not allowed to change ${field.label} after submission`);
      }
    }
  }

  /** True when body `rows` keep the stored rows: same rows by name and order, same values outside allow_on_submit child fields. */
  private sameRows(field: FieldMeta, rows: unknown, stored: unknown): boolean {
    const child = field.options ? this.site.registry.get(field.options) : undefined;
    if (rows === undefined || !child || !Array.isArray(rows)) return true;
    const before = (stored as DocData[] | undefined) ?? [];
    if (rows.length !== before.length) return false;
    const same = this.sameRowValues(child);
    return rows.every(
      (row: DocData, i) => row.name === (before[i] as DocData).name && same(row, before[i] as DocData),
    );
  }

  /** True when the body's rows that are stored ones (by name) keep their values outside allow_on_submit child fields. */
  private sameKeptRows(field: FieldMeta, rows: unknown, stored: unknown): boolean {
    const child = field.options ? this.site.registry.get(field.options) : undefined;
    if (rows === undefined || !child || !Array.isArray(rows)) return true;
    const byName = new Map(((stored as DocData[] | undefined) ?? []).map((row) => [String(row.name), row]));
    const same = this.sameRowValues(child);
    return rows.every((row: DocData) => {
      const old = row.name === undefined || row.name === null ? undefined : byName.get(String(row.name));
      return old === undefined || same(row, old);
    });
  }

  /** Compares a body row with its stored row in the child's fields that are not allow_on_submit. */
  private sameRowValues(child: DocTypeBinding): (row: DocData, old: DocData) => boolean {
    const fields = child.meta.fields.filter((f) => storesValue(f.fieldtype) && !f.allowOnSubmit);
    return (row, old) => {
      const after = { ...row };
      fillStoredValues(child.meta, after);
      normalizeValues(child.meta, after);
      return fields.every(
        (f) => JSON.stringify(after[f.fieldname] ?? null) === JSON.stringify(old[f.fieldname] ?? null),
      );
    };
  }

  /** Deletes the document: on_trash, the rows, after_delete. A submitted document must be cancelled first. */
  async delete(doc: Document): Promise<void> {
    await this.run(async () => {
      const state = this.state(doc);
      const { binding } = state;
      if (state.isNew) throw new DoesNotExistError(`${binding.meta.name} is not saved`);
      if (binding.meta.issingle) throw new PermissionError(`${binding.meta.name} cannot be deleted`);
      const points = this.extensions(binding);
      const op: DeleteOperation = {
        kind: 'delete',
        tx: this,
        trx: this.trx as Knex,
        binding,
        doc,
        stored: state.stored ?? this.data(doc),
      };
      let pending: Promise<void> | undefined;
      if (!this.ignorePermissions && (pending = runHandlers(points.authorizeDelete, op, undefined)))
        await pending;
      if (Number(doc.docstatus) === 1)
        throw new ValidationError('Submitted Record cannot be deleted. You must Cancel it first.');
      if ((pending = this.hook(points, op, 'on_trash'))) await pending;
      if ((pending = runHandlers(points.beforeDelete, op, undefined))) await pending;
      await this.site.rows.delete(this.trx as Knex, binding, doc.name);
      if ((pending = runHandlers(points.afterDelete, op, undefined))) await pending;
      if ((pending = this.hook(points, op, 'after_delete'))) await pending;
      this.written.add(binding.meta.name);
      if (points.afterCommit.length) this.writes.push(op);
    });
  }
}
