// The document lifecycle: insert, save and delete with Frappe's hook order, inside one transaction per request.
import type { Knex } from 'knex';
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
import { endUserSessions } from '../auth/sessions';
import { assertDeletePermission, assertSavePermission } from '../permissions/save-permission';
import { forgetUserPermissions, loadUserPermissions } from '../permissions/user-permissions';
import type { DocTypeBinding } from '../registry/registry';
import type { SessionUser, Site } from '../site';
import { Document, attachSession } from './document';
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
import { fieldLists, tableFields } from './field-lists';
import { checkName, defaultNamingSeries, hashName, makeName } from './naming';
import { forgetCredentials, isNewSecret, storePasswordFields } from './passwords';
import type { DocumentSession } from './session';
import { writeSingle, type DocData } from './store';
import { formatDatetime, now } from './values';
import { checkServerScript } from '../scripts/check-script';
import { mayRunEventScripts, runEventScripts } from '../scripts/doc-events';
import { serverScriptsChanged } from '../scripts/script-store';
import {
  afterDelete,
  checkAttachValues,
  checkFileDelete,
  checkFileSave,
  folderNameOf,
} from '../files/file-rules';
import { OAUTH_CLIENT, revokeClientGrants, revokeUserTokens } from '../oauth/document-revocation';
import { guardGrantRowWrite } from '../oauth/grant-rows';
import { authChanged } from '../auth/auth-broadcast';

/**
 * A copy of document data that takes new properties cheaply. V8 gives a `{ ...spread }` copy a map that each added
 * property replaces at a cost of microseconds (the write fills every stored field); Object.assign onto a literal
 * does not. Only for data whose own keys came through validation or the lifecycle: Object.assign would run the
 * `__proto__` setter for an own `__proto__` key, which raw JSON bodies may carry.
 */
function copyData(data: object): DocData {
  return Object.assign({}, data) as DocData;
}

/** DocTypes whose writes change what authentication reads (authChanged after the commit). */
const AUTH_DOCTYPES = ['User', 'Has Role', 'OAuth Bearer Token'];

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

/** A request's unit of work: creates documents bound to it and writes them through the lifecycle. */
export class DocumentTransaction implements DocumentSession {
  readonly messages: string[] = [];
  trx?: Knex;
  /** Skip the user's permission checks (writes the service makes on its own behalf). */
  ignorePermissions = false;
  /** The batch whose transaction this one is a savepoint of (bulk items on MariaDB), if any. */
  batch?: WriteBatch;
  /** DocTypes written in this transaction: their caches are dropped again after the commit. */
  private readonly written = new Set<string>();
  /** Users whose password this transaction changed: their sessions end after the commit. */
  private readonly passwordChanged = new Set<string>();
  private readonly states = new WeakMap<Document, DocState>();
  /** Counts the transactions this request ran; the current one's number while `trx` is open. */
  private runs = 0;
  /** Work to do once the transaction has committed (removing the bytes of deleted files); dropped on rollback. */
  private committed: (() => Promise<void>)[] = [];

  constructor(
    readonly site: Site,
    readonly user: SessionUser,
  ) {}

  /**
   * Runs `work` inside one database transaction; any error rolls everything back. `grouped`: the work inserts a new
   * document, and on MariaDB may share its transaction with other such works (db/mysql/group-commit.ts).
   */
  async run<T>(work: () => Promise<T>, grouped = false, restore?: () => void): Promise<T> {
    if (this.trx) return work();
    this.committed = [];
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
            this.passwordChanged.clear();
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
      // A new password ends every session of its user (a stolen session dies with the old password).
      for (const user of this.passwordChanged) await endUserSessions(this.site, user);
    } finally {
      this.passwordChanged.clear();
      // Again after the commit: a request that read the old rows in between must not keep them cached.
      for (const doctype of this.written) forgetCredentials(doctype);
      if (this.written.has('User Permission')) forgetUserPermissions();
      if (this.written.has('Server Script')) await serverScriptsChanged(this.site);
      if (AUTH_DOCTYPES.some((doctype) => this.written.has(doctype))) await authChanged(this.site);
      this.written.clear();
    }
    // Reached only after the commit: a rollback threw above (and the next run starts with a fresh list).
    const tasks = this.committed;
    this.committed = [];
    for (const task of tasks) await task().catch(() => undefined);
    return result;
  }

  /** Runs `task` after the current transaction commits (never when it rolls back). */
  afterCommit(task: () => Promise<void>): void {
    this.committed.push(task);
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
        if (
          doc.modified &&
          formatDatetime(String(doc.modified)) !== fresh.modified &&
          !binding.meta.issingle
        ) {
          throw new TimestampMismatchError(
            `Error: ${doc.name} (${binding.meta.name}) has been modified after you have opened it (${String(fresh.modified)}, ${String(doc.modified)}). Please refresh to get the latest document.`,
          );
        }
        stored = fresh;
      }
      const action = this.saveAction(binding, Number(stored?.docstatus ?? 0), docstatus, state.isNew);
      if (action === 'update_after_submit' && stored) this.checkUpdateAfterSubmit(binding, doc, stored);
      if (!this.ignorePermissions)
        await assertSavePermission(trx, this.site, this.user, binding, this.data(doc), stored, action);
      if (binding.meta.name === 'File') await checkFileSave(this, doc, stored);
      guardGrantRowWrite(this.ignorePermissions ? undefined : this.user, binding.meta.name, doc, stored);
      if (state.isNew) {
        const beforeInsert = this.hook(binding, doc, 'before_insert');
        if (beforeInsert) await beforeInsert;
        await runHook(doc, 'before_naming');
        // As Frappe's set_name_by_naming_series: the series used is also stored in the (usually mandatory) field.
        if (binding.meta.naming.kind === 'naming_series' && !doc.naming_series)
          doc.naming_series = defaultNamingSeries(binding.meta);
        doc.name = await this.newName(binding, doc, state.clientName);
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
      for (const hook of BEFORE_WRITE[action]) {
        const pending = this.hook(binding, doc, hook);
        if (pending) await pending;
      }
      const data = this.data(doc);
      if (binding.meta.name === 'Server Script' && action !== 'cancel')
        await checkServerScript(
          this.ignorePermissions ? undefined : this.user,
          registry,
          data,
          this.site.config.site.time_zone || 'UTC',
        );
      if (action !== 'cancel') {
        normalizeValues(binding.meta, data);
        for (const { field, child } of tableFields(binding.meta, registry))
          for (const row of (data[field.fieldname] as DocData[] | undefined) ?? [])
            normalizeValues(child.meta, row);
        checkMandatory(binding, registry, data);
        checkDataOptions(fieldLists(binding.meta).dataOptions, data, doc.owner);
        for (const { field, child } of tableFields(binding.meta, registry))
          for (const row of (data[field.fieldname] as DocData[] | undefined) ?? [])
            checkDataOptions(fieldLists(child.meta).dataOptions, row, doc.owner);
        const userPermissions = this.ignorePermissions
          ? undefined
          : await loadUserPermissions(this.site, this.user.name, trx);
        await checkLinks(this.site.rows, trx, binding, registry, data, userPermissions);
        await checkAttachValues(this, binding, data, stored);
        await checkUnique(this.site.rows, trx, binding, data);
      }
      // The response shows what the row holds: unset fields as their column default (both versions agree with a later GET).
      fillStoredValues(binding.meta, data);
      for (const { field, child } of tableFields(binding.meta, registry))
        for (const row of (data[field.fieldname] as DocData[] | undefined) ?? [])
          fillStoredValues(child.meta, row);
      if (!state.isNew && binding.meta.name === 'User' && isNewSecret(data.new_password))
        this.passwordChanged.add(String(data.name));
      await storePasswordFields(trx, binding, data);
      if (binding.meta.issingle) await writeSingle(trx, binding, data);
      else if (state.isNew) await this.site.rows.insert(trx, binding, data);
      else await this.site.rows.update(trx, binding, data, stored as DocData);
      // A disabled user's OAuth tokens are revoked with the change (enabling the user again does not revive them), and
      // so are they with a new password, as its sessions end.
      if (
        binding.meta.name === 'User' &&
        !state.isNew &&
        (Number(data.enabled) === 0 || this.passwordChanged.has(String(data.name))) &&
        registry.get('OAuth Bearer Token')
      ) {
        await revokeUserTokens(trx, String(data.name));
        this.written.add('OAuth Bearer Token');
      }
      Object.assign(doc, data);
      state.isNew = false;
      state.stored = copyValue(data);
      state.lockedIn = this.runs;
      for (const hook of AFTER_WRITE[action]) {
        const pending = this.hook(binding, doc, hook);
        if (pending) await pending;
      }
      forgetCredentials(binding.meta.name);
      this.written.add(binding.meta.name);
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
   * Runs the controller's `hook`, then the DocType Event scripts of that moment (Frappe's order). Undefined when there
   * is neither: a create passes six hooks, and most DocTypes define none of them, so no promise is made for those.
   */
  private hook(binding: DocTypeBinding, doc: Document, hook: HookName): Promise<void> | undefined {
    if (typeof doc[hook] === 'function') return this.hookAndScripts(binding, doc, hook);
    // No controller hook: the scripts alone, without a promise when they all run inline.
    return mayRunEventScripts(this, binding, hook) ? runEventScripts(this, binding, doc, hook) : undefined;
  }

  private async hookAndScripts(binding: DocTypeBinding, doc: Document, hook: HookName): Promise<void> {
    await runHook(doc, hook);
    const scripts = runEventScripts(this, binding, doc, hook);
    if (scripts) await scripts;
  }

  /** The client's name when it may choose one, else the controller's `autoname`, else the DocType's naming rule. */
  private async newName(
    binding: DocTypeBinding,
    doc: Document,
    clientName: string | undefined,
  ): Promise<string> {
    const trx = this.trx as Knex;
    // A folder is named by its path (Home/Reports), as in Frappe; the client's name is not used.
    const folder = binding.meta.name === 'File' ? folderNameOf(this.data(doc)) : undefined;
    if (folder !== undefined) return folder;
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
      const previous = new Set(
        ((this.state(doc).stored?.[field.fieldname] as DocData[] | undefined) ?? []).map((r) =>
          String(r.name),
        ),
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
        creation: row.creation && previous.has(String(row.name)) ? row.creation : stamp,
        modified: stamp,
        modified_by: this.user.name,
        doctype: field.options,
      }));
    }
  }

  private checkUpdateAfterSubmit(binding: DocTypeBinding, doc: Document, stored: DocData): void {
    for (const field of binding.meta.fields) {
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
    const fields = child.meta.fields.filter((f) => storesValue(f.fieldtype) && !f.allowOnSubmit);
    return rows.every((row: DocData, i) => {
      const after = { ...row };
      fillStoredValues(child.meta, after);
      normalizeValues(child.meta, after);
      const old = before[i] as DocData;
      return (
        after.name === old.name &&
        fields.every(
          (f) => JSON.stringify(after[f.fieldname] ?? null) === JSON.stringify(old[f.fieldname] ?? null),
        )
      );
    });
  }

  /** Deletes the document: on_trash, the rows, after_delete. A submitted document must be cancelled first. */
  async delete(doc: Document): Promise<void> {
    await this.run(async () => {
      const state = this.state(doc);
      if (state.isNew) throw new DoesNotExistError(`${state.binding.meta.name} is not saved`);
      if (state.binding.meta.issingle)
        throw new PermissionError(`${state.binding.meta.name} cannot be deleted`);
      if (!this.ignorePermissions)
        await assertDeletePermission(
          this.trx as Knex,
          this.site,
          this.user,
          state.binding,
          state.stored ?? this.data(doc),
        );
      if (Number(doc.docstatus) === 1)
        throw new ValidationError('Submitted Record cannot be deleted. You must Cancel it first.');
      const onTrash = this.hook(state.binding, doc, 'on_trash');
      if (onTrash) await onTrash;
      if (state.binding.meta.name === 'File') await checkFileDelete(this, state.stored ?? this.data(doc));
      await this.site.rows.delete(this.trx as Knex, state.binding, doc.name);
      await afterDelete(this, state.binding, doc);
      if (state.binding.meta.name === OAUTH_CLIENT && this.site.registry.get('OAuth Bearer Token')) {
        await revokeClientGrants(this.trx as Knex, doc.name);
        this.written.add('OAuth Bearer Token');
      }
      const afterDeleteHook = this.hook(state.binding, doc, 'after_delete');
      if (afterDeleteHook) await afterDeleteHook;
      forgetCredentials(state.binding.meta.name);
      this.written.add(state.binding.meta.name);
    });
  }
}
