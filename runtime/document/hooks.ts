// The document lifecycle: one closed, ordered list of controller hook names (see docs/lifecycle.md).

/** Every hook a controller may define, in the order Frappe calls them across insert, save, submit, cancel and delete. */
export const HOOKS = [
  'before_insert',
  'before_naming',
  'autoname',
  'before_validate',
  'validate',
  'before_save',
  'before_submit',
  'before_cancel',
  'before_update_after_submit',
  'after_insert',
  'on_update',
  'on_submit',
  'on_cancel',
  'on_update_after_submit',
  'on_trash',
  'after_delete',
] as const;

/** A lifecycle hook name. */
export type HookName = (typeof HOOKS)[number];

/** The action a save performs, decided from the docstatus transition. */
export type SaveAction = 'insert' | 'save' | 'submit' | 'cancel' | 'update_after_submit';

/** Hooks run before writing, per action. */
export const BEFORE_WRITE: Readonly<Record<SaveAction, readonly HookName[]>> = {
  insert: ['before_validate', 'validate', 'before_save'],
  save: ['before_validate', 'validate', 'before_save'],
  submit: ['before_validate', 'validate', 'before_submit'],
  cancel: ['before_cancel'],
  update_after_submit: ['before_update_after_submit'],
};

/** Hooks run after writing, per action. */
export const AFTER_WRITE: Readonly<Record<SaveAction, readonly HookName[]>> = {
  insert: ['after_insert', 'on_update'],
  save: ['on_update'],
  submit: ['on_update', 'on_submit'],
  cancel: ['on_cancel'],
  update_after_submit: ['on_update_after_submit'],
};

/** Calls the hook on the document when its controller defines it. */
export async function runHook(doc: object, hook: HookName): Promise<void> {
  const fn = (doc as Record<string, unknown>)[hook];
  if (typeof fn === 'function') await (fn as () => unknown).call(doc);
}
