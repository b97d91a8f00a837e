// Server Scripts of type DocType Event: run after the controller's hook of the same moment (Frappe's order), inside
// the document's transaction, as the user saving it. A Before event's changes to `doc` are saved; frappe.throw (or any
// failure) rolls the whole operation back.
import type { Document } from '../document/document';
import type { HookName } from '../document/hooks';
import type { DocumentTransaction } from '../document/lifecycle';
import type { DocData } from '../db/row-store';
import { isTableType } from '../meta/field-types';
import { STANDARD_FIELDS } from '../meta/types';
import type { DocTypeBinding } from '../registry/registry';
import { runScript, runScriptInline } from './run-script';
import { loadedScriptIndex, scriptIndex, type ServerScript } from './script-store';

/** The DocType event a controller hook is (frappe/core/doctype/server_script/server_script_utils.py EVENT_MAP). */
export const EVENT_OF_HOOK: Partial<Record<HookName, string>> = {
  before_insert: 'Before Insert',
  after_insert: 'After Insert',
  before_validate: 'Before Validate',
  validate: 'Before Save',
  on_update: 'After Save',
  before_submit: 'Before Submit',
  on_submit: 'After Submit',
  before_cancel: 'Before Cancel',
  on_cancel: 'After Cancel',
  on_trash: 'Before Delete',
  after_delete: 'After Delete',
  before_update_after_submit: 'Before Save (Submitted Document)',
  on_update_after_submit: 'After Save (Submitted Document)',
};

/** Fields a script may not change through `doc`: the document's identity and state. */
const FIXED: ReadonlySet<string> = new Set([...STANDARD_FIELDS, 'doctype', 'amended_from']);

/**
 * Applies what a Before event script changed in `doc`: value fields of the DocType only, never identity or tables.
 * `before` is what the script was given (or `doc` itself when nothing has changed it since).
 */
function applyChanges(binding: DocTypeBinding, doc: Document, before: DocData, after: unknown): void {
  if (after === null || typeof after !== 'object' || Array.isArray(after)) return;
  const values = after as Record<string, unknown>;
  for (const key of Object.keys(values)) {
    const field = binding.fieldMap.get(key);
    if (!field || FIXED.has(key) || isTableType(field.fieldtype)) continue;
    const value = values[key];
    const old = before[key];
    // Values compared as JSON text; two strings that differ need no text (a script's usual change).
    if (value === old) continue;
    if (
      (typeof value !== 'string' || typeof old !== 'string') &&
      JSON.stringify(value) === JSON.stringify(old)
    )
      continue;
    doc[key] = value;
  }
}

/**
 * False when no DocType Event script of `binding` can run for `hook` (no such event, scripts off, or none for it in the
 * loaded index): the caller may skip runEventScripts. True when there are some, or the scripts are not loaded yet.
 */
export function mayRunEventScripts(
  tx: DocumentTransaction,
  binding: DocTypeBinding,
  hook: HookName,
): boolean {
  const event = EVENT_OF_HOOK[hook];
  if (!event || tx.site.config.site.server_script_enabled === false) return false;
  const index = loadedScriptIndex(tx.site);
  return !index || index.events.has(`${binding.meta.name}|${event}`);
}

/**
 * Runs the enabled DocType Event scripts of `binding` for `hook` on `doc`, in name order. Undefined when they have all
 * run (the loaded index, every script run inline: no promise, no turn of the event loop); else a promise for the rest,
 * from the first script that has to run in a worker (or all of them while the index is not loaded).
 */
export function runEventScripts(
  tx: DocumentTransaction,
  binding: DocTypeBinding,
  doc: Document,
  hook: HookName,
): Promise<void> | undefined {
  const event = EVENT_OF_HOOK[hook];
  if (!event || tx.site.config.site.server_script_enabled === false) return undefined;
  const index = loadedScriptIndex(tx.site);
  if (!index) return runEventScriptsFrom(tx, binding, doc, event, undefined, 0);
  const scripts = index.events.get(`${binding.meta.name}|${event}`);
  if (!scripts) return undefined;
  const caller = { site: tx.site, user: tx.user, version: 2 as const, tx };
  for (let i = 0; i < scripts.length; i++) {
    // The document itself: an inline run only reads it (as JSON, the fields the script names), and nothing else
    // changes it before applyChanges compares its values with the script's.
    const result = runScriptInline(scripts[i] as ServerScript, caller, { doc });
    if (!result) return runEventScriptsFrom(tx, binding, doc, event, scripts, i);
    if (event.startsWith('Before')) applyChanges(binding, doc, doc, result.doc);
  }
  return undefined;
}

/** Runs the event's scripts from the `from`th on, through runScript (inline or in a worker); all of them when not given. */
async function runEventScriptsFrom(
  tx: DocumentTransaction,
  binding: DocTypeBinding,
  doc: Document,
  event: string,
  given: ServerScript[] | undefined,
  from: number,
): Promise<void> {
  // The loaded index when there is one (no promise to wait for), else read (inside the transaction).
  const scripts =
    given ??
    (loadedScriptIndex(tx.site) ?? (await scriptIndex(tx.site, tx.trx))).events.get(
      `${binding.meta.name}|${event}`,
    );
  if (!scripts) return;
  for (const script of scripts.slice(from)) {
    // The document's own enumerable properties, not copied further: the script gets them as JSON (an inline run only the
    // fields it names, inline-sandbox.ts), and applyChanges compares values as JSON text.
    const before: DocData = Object.assign({}, doc);
    const result = await runScript(script, { site: tx.site, user: tx.user, version: 2, tx }, { doc: before });
    if (event.startsWith('Before')) applyChanges(binding, doc, before, result.doc);
  }
}
