// A site for the permission tests: the repo's DocTypes plus test/permissions/fixtures (Perm Case, Perm Case Item,
// Perm Region), one user per permission shape, User Permissions and a few cases created by Administrator.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { runGenerator } from '../../../generator/run-generator';
import type { Registry } from '../../../runtime/registry/registry';
import { createTestSite, createUser, type TestSite } from '../../helpers/test-site';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * Generates the repo's DocTypes plus the permission fixtures into test/tmp/gen-<pid>-<random> (the shared fixture
 * helper sweeps such folders once their process has ended) and loads the registry through jest's module registry.
 */
export async function permissionRegistry(): Promise<Registry> {
  if (process.cwd() !== ROOT) throw new Error(`run the tests from ${ROOT}`);
  const out = path.join(ROOT, 'test/tmp', `gen-${process.pid}-${randomBytes(4).toString('hex')}`);
  await runGenerator({ doctypes: ['doctypes', 'test/permissions/fixtures'], out, cwd: ROOT });
  return (require(path.join(out, 'index.ts')) as { registry: Registry }).registry;
}

/** The users of the permission matrix: their Authorization header values. */
export interface PermissionUsers {
  /** Signed in, no role. */
  nobody: string;
  /** Case Reader: read only. */
  reader: string;
  /** Case Writer: read, write, create, delete. */
  writer: string;
  /** Case Owner: every right, but only on the user's own cases (if_owner). */
  owner: string;
  /** A second Case Owner. */
  otherOwner: string;
  /** Case Writer restricted by two User Permissions to the regions North and South. */
  restricted: string;
  /** Case Auditor: reads level 0 and level 1 (the secret note, item costs). */
  auditor: string;
  /** Case Submitter: read, write, create, submit, cancel, amend. */
  submitter: string;
}

/** The user ids behind {@link PermissionUsers}. */
export const USER_IDS: Readonly<Record<keyof PermissionUsers, string>> = {
  nobody: 'nobody@perm.test',
  reader: 'reader@perm.test',
  writer: 'writer@perm.test',
  owner: 'owner@perm.test',
  otherOwner: 'other-owner@perm.test',
  restricted: 'restricted@perm.test',
  auditor: 'auditor@perm.test',
  submitter: 'submitter@perm.test',
};

const ROLES: Readonly<Record<keyof PermissionUsers, string[]>> = {
  nobody: [],
  reader: ['Case Reader'],
  writer: ['Case Writer'],
  owner: ['Case Owner'],
  otherOwner: ['Case Owner'],
  restricted: ['Case Writer'],
  auditor: ['Case Auditor'],
  submitter: ['Case Submitter'],
};

/** A permission test site with its users. */
export interface PermissionSite {
  t: TestSite;
  users: PermissionUsers;
}

/** Opens the site, creates the regions North, South and West, the users and the restricted user's User Permissions. */
export async function createPermissionSite(): Promise<PermissionSite> {
  const t = await createTestSite({ registry: await permissionRegistry() });
  const users = {} as PermissionUsers;
  for (const key of Object.keys(USER_IDS) as (keyof PermissionUsers)[])
    users[key] = await createUser(t, USER_IDS[key], ROLES[key]);
  for (const region of ['North', 'South', 'West']) await adminPost(t, 'Perm Region', { region_name: region });
  for (const region of ['North', 'South']) {
    await adminPost(t, 'User Permission', {
      user: USER_IDS.restricted,
      allow: 'Perm Region',
      for_value: region,
    });
  }
  return { t, users };
}

/** Creates a document as Administrator through v2; returns it. */
export async function adminPost(t: TestSite, doctype: string, body: object): Promise<Record<string, any>> {
  const res = await t.http
    .post(`/api/v2/document/${encodeURIComponent(doctype)}`)
    .set('Authorization', t.adminToken)
    .send(body);
  if (res.status !== 201)
    throw new Error(`could not create ${doctype}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as Record<string, any>;
}

/** Creates a document as `auth` through v2; returns it. */
export async function postAs(
  t: TestSite,
  auth: string,
  doctype: string,
  body: object,
): Promise<Record<string, any>> {
  const res = await t.http
    .post(`/api/v2/document/${encodeURIComponent(doctype)}`)
    .set('Authorization', auth)
    .send(body);
  if (res.status !== 201)
    throw new Error(`could not create ${doctype}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as Record<string, any>;
}

/** The stored row of a document (straight from the database), without the volatile timestamps. */
export async function storedRow(
  t: TestSite,
  doctype: string,
  name: string,
): Promise<Record<string, unknown> | undefined> {
  const row = (await t.site.db.knex(`tab${doctype}`).where({ name }).first()) as
    Record<string, unknown> | undefined;
  return row ? { ...row } : undefined;
}
