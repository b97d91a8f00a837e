// A site for the back-link tests: the repo's DocTypes plus test/back-links/fixtures (Audit Task, linked to from Audit
// Hash, its child rows Audit Step and the Single Audit Settings; Audit Team, which has a `disabled` field).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { runGenerator } from '../../generator/run-generator';
import type { SiteConfig } from '../../runtime/config/config';
import type { Registry } from '../../runtime/registry/registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Generates the repo's DocTypes plus the back-link fixtures into test/tmp/gen-<pid>-<random> (the shared fixture
 * helper sweeps such folders once their process has ended) and loads the registry through jest's module registry.
 */
export async function backLinksRegistry(): Promise<Registry> {
  if (process.cwd() !== ROOT) throw new Error(`run the tests from ${ROOT}`);
  const out = path.join(ROOT, 'test/tmp', `gen-${process.pid}-${randomBytes(4).toString('hex')}`);
  await runGenerator({ doctypes: ['doctypes', 'test/back-links/fixtures'], out, cwd: ROOT });
  return (require(path.join(out, 'index.ts')) as { registry: Registry }).registry;
}

/** A test site over the back-link fixtures (SQLite, or the database the environment names). */
export async function createBackLinksSite(site: Partial<SiteConfig> = {}): Promise<TestSite> {
  return createTestSite({ registry: await backLinksRegistry(), site });
}

/** Creates a document as Administrator through v2 (201 expected); returns its name. */
export async function create(t: TestSite, doctype: string, body: object): Promise<string> {
  const res = await t.http.post(`/api/v2/document/${doctype}`).set('Authorization', t.adminToken).send(body);
  if (res.status !== 201)
    throw new Error(`could not create ${doctype}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.name as string;
}

/** Updates a document as Administrator through v2 (200 expected). */
export async function update(t: TestSite, doctype: string, name: string, body: object): Promise<void> {
  const res = await t.http
    .put(`/api/v2/document/${doctype}/${name}`)
    .set('Authorization', t.adminToken)
    .send(body);
  if (res.status !== 200)
    throw new Error(`could not update ${doctype} ${name}: ${res.status} ${JSON.stringify(res.body)}`);
}

/** True when the document's row is stored. */
export async function exists(t: TestSite, doctype: string, name: string): Promise<boolean> {
  return (await t.site.db.knex(`tab${doctype}`).where({ name }).first()) !== undefined;
}
