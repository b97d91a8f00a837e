// The OpenID claims of a user: what the ID token and the userinfo endpoint (openid_profile) say about them.
import { loadUser } from '../auth/users';
import type { Site } from '../site';

/** The standard claims this provider answers, plus the user's roles. */
export interface UserClaims {
  sub: string;
  email?: string;
  name: string;
  roles: string[];
}

/** Roles every signed-in user has implicitly; they say nothing about the user. */
const IMPLICIT_ROLES = new Set(['All', 'Guest']);

/** The claims of an enabled user; undefined for a missing or disabled one. */
export async function userClaims(site: Site, name: string): Promise<UserClaims | undefined> {
  const user = await loadUser(site.db.knex, name);
  if (!user || !user.enabled) return undefined;
  const row = (await site.db.knex('tabUser').where('name', name).first('email')) as
    { email: string | null } | undefined;
  return {
    sub: user.name,
    ...(row?.email ? { email: row.email } : {}),
    name: user.fullName || user.name,
    roles: [...user.roles].filter((role) => !IMPLICIT_ROLES.has(role)).sort(),
  };
}
