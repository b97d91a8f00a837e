// The providers of list restrictions: each may narrow the rows of a DocType a user sees in lists and counts (a filter
// tree ANDed into the query). Features register them from the composition root (runtime/features.ts): the
// controllers' `permissionQuery` and the Permission Query server scripts; queryAccess asks them in that order.
import type { FilterNode } from '../query/filter-tree';
import type { DocTypeBinding } from '../registry/registry';
import type { SessionUser, Site } from '../site';
import { SitePlugin } from '../site';

/** The rows of `binding` that `user` may see, as a filter tree; undefined: this provider does not restrict them. */
export type ListRestrictionProvider = (
  site: Site,
  user: SessionUser,
  binding: DocTypeBinding,
) => FilterNode | undefined | Promise<FilterNode | undefined>;

/** The site's providers, in registration order. */
const PROVIDERS = new SitePlugin<ListRestrictionProvider[]>('list restrictions', () => []);

/** Adds a provider of list restrictions to the site (after those added before it). */
export function addListRestriction(site: Site, provider: ListRestrictionProvider): void {
  PROVIDERS.of(site).push(provider);
}

/** Appends to `parts` the restriction of every provider of the site that has one for `user` on `binding`. */
export async function collectListRestrictions(
  site: Site,
  user: SessionUser,
  binding: DocTypeBinding,
  parts: FilterNode[],
): Promise<void> {
  for (const provider of PROVIDERS.of(site)) {
    const found = provider(site, user, binding);
    const tree = found instanceof Promise ? await found : found;
    if (tree) parts.push(tree);
  }
}
