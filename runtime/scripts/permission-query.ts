// Server Scripts of type Permission Query: the script sets the global `conditions` to a filter list in the list-query
// syntax (never SQL text); it is parsed against the DocType's metadata and ANDed into every list and count of the
// reference DocType for users other than Administrator.
import { AppError, ServerScriptError } from '../errors/errors';
import { readAccessTo } from '../permissions/query-access';
import type { FilterNode } from '../query/filter-tree';
import { and } from '../query/filter-tree';
import { parseFilters } from '../query/parse-filters';
import type { QueryAccess } from '../query/reader-access';
import type { DocTypeBinding } from '../registry/registry';
import type { SessionUser, Site } from '../site';
import { runScript } from './run-script';
import { scriptIndex } from './script-store';

/** Conditions name any field but Password fields (the script's author, a System Manager, decides them). */
const CONDITION_ACCESS: QueryAccess = {
  canReadField: (meta, fieldname) =>
    meta.fields.find((f) => f.fieldname === fieldname)?.fieldtype !== 'Password',
};

/** The rows the Permission Query scripts of `binding` let `user` see, as a filter tree; undefined: no script. */
export async function scriptRestriction(
  site: Site,
  user: SessionUser,
  binding: DocTypeBinding,
): Promise<FilterNode | undefined> {
  if (site.config.site.server_script_enabled === false) return undefined;
  const scripts = (await scriptIndex(site)).permissionQueries.get(binding.meta.name);
  if (!scripts) return undefined;
  const parts: FilterNode[] = [];
  for (const script of scripts) {
    const { conditions } = await runScript(script, { site, user, version: 1 }, { conditions: true });
    if (conditions === undefined || conditions === null || conditions === '') continue;
    if (typeof conditions === 'string')
      throw new ServerScriptError(
        `Permission Query ${script.name}: conditions must be a filter list (as the filters parameter), not SQL text`,
      );
    try {
      parts.push(
        parseFilters(
          { site, binding, access: CONDITION_ACCESS, accessTo: readAccessTo(site, user) },
          conditions,
          `Permission Query ${script.name} conditions`,
        ),
      );
    } catch (err) {
      if (err instanceof AppError)
        throw new ServerScriptError(`Permission Query ${script.name}: ${err.message}`);
      throw err;
    }
  }
  if (parts.length === 0) return undefined;
  return parts.length === 1 ? parts[0] : and(...parts);
}
