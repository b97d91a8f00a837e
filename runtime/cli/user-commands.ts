// `svc add-user`, `svc set-password` and `svc generate-keys`: user administration from the shell.
import { parseArgs } from 'node:util';
import { regenerateUserKeys } from '../auth/key-regeneration';
import { hashPassword, writeAuth } from '../auth/passwords';
import { resolveUserName } from '../auth/users';
import { openSite } from '../bootstrap';
import { loadConfig } from '../config/config';
import { DocumentTransaction } from '../document/lifecycle';
import { ADMINISTRATOR } from '../site';
import { loadRegistry } from './load-registry';

const admin = { name: ADMINISTRATOR, roles: new Set(['Administrator', 'System Manager', 'All']) };

async function withSite<T>(work: (site: Awaited<ReturnType<typeof openSite>>) => Promise<T>): Promise<T> {
  const site = await openSite(loadConfig(), await loadRegistry());
  try {
    return await work(site);
  } finally {
    await site.db.close();
  }
}

/** `svc add-user EMAIL --first-name NAME [--password PWD] [--role ROLE ...]`. */
export async function addUser(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'first-name': { type: 'string' },
      password: { type: 'string' },
      role: { type: 'string', multiple: true },
    },
  });
  const email = positionals[0];
  if (!email) {
    console.error('svc add-user: EMAIL is required');
    return 1;
  }
  const name = await withSite(async (site) => {
    const tx = new DocumentTransaction(site, admin);
    return tx.run(async () => {
      const doc = tx.newDoc('User', {
        email,
        first_name: values['first-name'] ?? email.split('@')[0],
        enabled: 1,
        roles: (values.role ?? []).map((role) => ({ role })),
        ...(values.password ? { new_password: values.password } : {}),
      });
      await doc.insert();
      return String(doc.name);
    });
  });
  // The name is the email in lower case (Frappe's User.autoname).
  console.log(`added user ${name}`);
  return 0;
}

/** `svc set-password USER PASSWORD`. */
export async function setPassword(argv: string[]): Promise<number> {
  const [user, password] = argv;
  if (!user || !password) {
    console.error('svc set-password: USER and PASSWORD are required');
    return 1;
  }
  const name = await withSite(async (site) => {
    const found = await resolveUserName(site.db.knex, user);
    if (!found) throw new Error(`User ${user} not found`);
    await writeAuth(site.db.knex, 'User', found, 'password', await hashPassword(password));
    return found;
  });
  console.log(`password set for ${name}`);
  return 0;
}

/** `svc generate-keys USER`: prints `api_key api_secret`. */
export async function generateKeysFor(argv: string[]): Promise<number> {
  const [user] = argv;
  if (!user) {
    console.error('svc generate-keys: USER is required');
    return 1;
  }
  const keys = await withSite(async (site) => {
    const found = await resolveUserName(site.db.knex, user);
    return found ? regenerateUserKeys(site, found) : undefined;
  });
  if (!keys) {
    console.error(`svc generate-keys: User ${user} not found`);
    return 1;
  }
  console.log(`api_key=${keys.api_key}\napi_secret=${keys.api_secret}`);
  return 0;
}
