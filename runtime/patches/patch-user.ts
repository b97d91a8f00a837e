// The user patches act as: Administrator, its permission checks skipped (the writes are the migration's own).
import { ADMINISTRATOR, type SessionUser } from '../site';

/** Administrator, with the roles a site gives it. */
export const PATCH_USER: SessionUser = {
  name: ADMINISTRATOR,
  roles: new Set(['Administrator', 'System Manager', 'All']),
};
