// What Server Scripts add to the document lifecycle: DocType Event scripts after each controller hook, the checks a
// Server Script passes before it is stored, and the script caches dropped (here and in other processes) after a change;
// and the Permission Query scripts as a list restriction.
import { addListRestriction } from '../permissions/list-restrictions';
import { lifecycleOf } from '../document/extension-points';
import type { Site } from '../site';
import { checkServerScript } from './check-script';
import { mayRunEventScripts, runEventScripts } from './doc-events';
import { scriptRestriction } from './permission-query';
import { serverScriptsChanged } from './script-store';

/** Registers the Server Scripts' handlers and list restrictions. */
export function registerServerScripts(site: Site): void {
  const extensions = lifecycleOf(site);
  // Without a promise when no script runs or all run inline.
  extensions.on('docEvent', (op, hook) =>
    mayRunEventScripts(op.tx, op.binding, hook)
      ? runEventScripts(op.tx, op.binding, op.doc, hook)
      : undefined,
  );
  extensions.on(
    'validateSave',
    ({ tx, data }) =>
      checkServerScript(
        tx.ignorePermissions ? undefined : tx.user,
        tx.site.registry,
        data,
        tx.site.config.site.time_zone || 'UTC',
      ),
    'Server Script',
  );
  extensions.on('afterTransaction', (tx) => serverScriptsChanged(tx.site), 'Server Script');
  addListRestriction(site, scriptRestriction);
}
