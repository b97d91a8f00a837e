// The document lifecycle's extension points: one closed, ordered list of names (docs/lifecycle.md has the diagram).
// Features (files, scripts, permissions, auth, OAuth …) register handlers into them from the composition root
// (runtime/features.ts), for one DocType or for all; the lifecycle runs them in registration order and knows none of
// them. A name outside the list is refused when registered, as fastify refuses an unknown hook name.
import type { Knex } from 'knex';
import { SitePlugin, type Site } from '../site';
import type { DocTypeBinding } from '../registry/registry';
import type { LinkRestriction } from './checks';
import type { Document } from './document';
import type { HookName, SaveAction } from './hooks';
import type { DocumentTransaction } from './lifecycle';
import type { DocData } from '../db/row-store';

/** Every extension point, in the order a save (then a delete, then the end of the transaction) reaches them. */
export const EXTENSION_POINTS = [
  'authorizeSave',
  'beforeSave',
  'chooseName',
  'docEvent',
  'validateSave',
  'checkValues',
  'beforeWrite',
  'afterWrite',
  'authorizeDelete',
  'beforeDelete',
  'afterDelete',
  'afterCommit',
  'afterTransaction',
] as const;

/** An extension point's name. */
export type ExtensionPoint = (typeof EXTENSION_POINTS)[number];

/** What every handler is given: the request's transaction, the DocType and the document. */
export interface DocumentOperation {
  readonly tx: DocumentTransaction;
  /** The open transaction (the same as `tx.trx`). */
  readonly trx: Knex;
  readonly binding: DocTypeBinding;
  readonly doc: Document;
}

/** A save (insert, save, submit, cancel, update after submit) as its handlers see it. */
export interface SaveOperation extends DocumentOperation {
  readonly kind: 'save';
  /** What the save does, from the docstatus transition. */
  readonly action: SaveAction;
  /** True when the save inserts the document. */
  readonly isNew: boolean;
  /** The document as stored before this save (undefined for an insert). */
  readonly stored: DocData | undefined;
  /** The writer's restriction on Link values (User Permissions), set by an authorizeSave handler. */
  linkRestriction?: LinkRestriction;
  /** The new document's name, when a chooseName handler decides it (a File folder: its path). */
  name?: string;
  /**
   * Set by a beforeSave handler whose values all come from stored rows, some naming documents that may be gone since
   * (a webhook request's resend): the Link check is skipped, as Frappe's `flags.ignore_links`.
   */
  ignoreLinks?: boolean;
}

/** A save from validateSave on: `data` holds the values being written (handlers may still change them until the write). */
export interface WritingSave extends SaveOperation {
  data: DocData;
}

/** A delete as its handlers see it. */
export interface DeleteOperation extends DocumentOperation {
  readonly kind: 'delete';
  /** The document as stored. */
  readonly stored: DocData;
}

/** A handler's result: a promise when it has work to wait for; nothing when it finished at once. */
type Done = Promise<void> | void;

/** The handler each point takes. */
export interface ExtensionHandlers {
  /** The user's rights on the document, once the docstatus transition is known; skipped for `ignorePermissions`. */
  authorizeSave(op: SaveOperation): Done;
  /** After authorization, before the controller's first hook: rules the document must meet as given. */
  beforeSave(op: SaveOperation): Done;
  /** A new document, after before_naming: a handler may set `op.name` (the naming rules decide otherwise). */
  chooseName(op: SaveOperation): Done;
  /** Right after each controller hook (before_insert … after_delete, named by `hook`), in the same transaction. */
  docEvent(op: SaveOperation | DeleteOperation, hook: HookName): Done;
  /** After the controller's before-write hooks, before the value checks; not on cancel. */
  validateSave(op: WritingSave): Done;
  /** With the value checks: after mandatory, data options and links, before unique; not on cancel. */
  checkValues(op: WritingSave): Done;
  /** The values are final: the last change to what the row holds (Password fields move out). */
  beforeWrite(op: WritingSave): Done;
  /** The row is written, before the controller's after-write hooks: writes that go with it. */
  afterWrite(op: WritingSave): Done;
  /** The user's right to delete the stored document; skipped for `ignorePermissions`. */
  authorizeDelete(op: DeleteOperation): Done;
  /** After on_trash, before the rows go. */
  beforeDelete(op: DeleteOperation): Done;
  /** The rows are gone, before the controller's after_delete: deletes and revocations that go with them. */
  afterDelete(op: DeleteOperation): Done;
  /**
   * After the commit, once per document written (in the order written); never after a rollback. A throwing handler
   * cannot undo the write but fails the request.
   */
  afterCommit(op: WritingSave | DeleteOperation): Done;
  /**
   * Once per transaction that wrote a DocType the handler is registered for (committed or rolled back: caches built
   * from uncommitted rows go too); `written` names every DocType written. A handler registered for several runs once.
   */
  afterTransaction(tx: DocumentTransaction, written: ReadonlySet<string>): Done;
}

/** The handlers of every point for one DocType (its own and those for all), in registration order. */
export type ExtensionTable = { readonly [P in ExtensionPoint]: readonly ExtensionHandlers[P][] };

interface Registration {
  point: ExtensionPoint;
  /** undefined: every DocType. */
  doctype: string | undefined;
  handler: ExtensionHandlers[ExtensionPoint];
}

const KNOWN: ReadonlySet<string> = new Set(EXTENSION_POINTS);

/** Sets of written DocTypes whose afterTransaction handlers are kept (a bulk write of many DocTypes need not be). */
const SETTLED_KEYS = 256;

/** A site's lifecycle extensions: what features registered, looked up per DocType (cached) by the lifecycle. */
export class LifecycleExtensions {
  private readonly registrations: Registration[] = [];
  private readonly tables = new Map<string, ExtensionTable>();
  /**
   * afterTransaction handlers by the DocTypes written, in the order written (a tracked update writes its DocType and
   * Version): at most SETTLED_KEYS such lists are kept.
   */
  private readonly settled = new Map<string, readonly ExtensionHandlers['afterTransaction'][]>();

  /** Registers `handler` at `point` for `doctype` (every DocType when not given); an unknown point throws. */
  on<P extends ExtensionPoint>(point: P, handler: ExtensionHandlers[P], doctype?: string): void {
    if (!KNOWN.has(point))
      throw new TypeError(
        `Unknown lifecycle extension point: ${String(point)} (one of ${EXTENSION_POINTS.join(', ')})`,
      );
    if (typeof handler !== 'function') throw new TypeError(`The ${point} handler must be a function`);
    this.registrations.push({ point, doctype, handler });
    this.tables.clear();
    this.settled.clear();
  }

  /** The handlers of every point that apply to `doctype`. */
  of(doctype: string): ExtensionTable {
    let table = this.tables.get(doctype);
    if (!table) this.tables.set(doctype, (table = this.build(doctype)));
    return table;
  }

  /** The afterTransaction handlers for the DocTypes `written`, each once, in registration order. */
  afterTransaction(written: ReadonlySet<string>): readonly ExtensionHandlers['afterTransaction'][] {
    const key = written.size === 1 ? (written.values().next().value as string) : [...written].join('\u0000');
    let handlers = this.settled.get(key);
    if (!handlers) {
      handlers = this.settledFor(written);
      if (this.settled.size < SETTLED_KEYS) this.settled.set(key, handlers);
    }
    return handlers;
  }

  private settledFor(written: ReadonlySet<string>): ExtensionHandlers['afterTransaction'][] {
    const handlers = new Set<ExtensionHandlers['afterTransaction']>();
    for (const r of this.registrations)
      if (r.point === 'afterTransaction' && (r.doctype === undefined || written.has(r.doctype)))
        handlers.add(r.handler as ExtensionHandlers['afterTransaction']);
    return [...handlers];
  }

  private build(doctype: string): ExtensionTable {
    const handlersOf = <P extends ExtensionPoint>(point: P): ExtensionHandlers[P][] =>
      this.registrations
        .filter((r) => r.point === point && (r.doctype === undefined || r.doctype === doctype))
        .map((r) => r.handler as ExtensionHandlers[P]);
    // Spelled out point by point: the compiler checks each list's handler type (and that no point is missing).
    return {
      authorizeSave: handlersOf('authorizeSave'),
      beforeSave: handlersOf('beforeSave'),
      chooseName: handlersOf('chooseName'),
      docEvent: handlersOf('docEvent'),
      validateSave: handlersOf('validateSave'),
      checkValues: handlersOf('checkValues'),
      beforeWrite: handlersOf('beforeWrite'),
      afterWrite: handlersOf('afterWrite'),
      authorizeDelete: handlersOf('authorizeDelete'),
      beforeDelete: handlersOf('beforeDelete'),
      afterDelete: handlersOf('afterDelete'),
      afterCommit: handlersOf('afterCommit'),
      afterTransaction: handlersOf('afterTransaction'),
    };
  }
}

/**
 * Runs `handlers` in order with `op` (and `extra`). Undefined when every one finished at once (no promise, no turn of
 * the event loop: a create passes a dozen points, most with no handler or a synchronous one); else a promise for the
 * rest, from the first handler that returned one. A throwing handler stops the rest and the error reaches the caller.
 */
export function runHandlers<A, B>(
  handlers: readonly ((op: A, extra: B) => Done)[],
  op: A,
  extra: B,
): Promise<void> | undefined {
  for (let i = 0; i < handlers.length; i++) {
    const pending = (handlers[i] as (op: A, extra: B) => Done)(op, extra);
    if (pending) return finish(pending, handlers, i + 1, op, extra);
  }
  return undefined;
}

async function finish<A, B>(
  pending: Promise<void>,
  handlers: readonly ((op: A, extra: B) => Done)[],
  from: number,
  op: A,
  extra: B,
): Promise<void> {
  await pending;
  for (let i = from; i < handlers.length; i++) {
    const next = (handlers[i] as (op: A, extra: B) => Done)(op, extra);
    if (next) await next;
  }
}

/** The site's lifecycle extensions, a plugin of the site (made when the site opens, see bootstrap.ts). */
const LIFECYCLE = new SitePlugin('lifecycle', () => new LifecycleExtensions());

/** The lifecycle extensions of a site: where features register (runtime/features.ts) and the lifecycle reads. */
export function lifecycleOf(site: Site): LifecycleExtensions {
  return LIFECYCLE.of(site);
}
