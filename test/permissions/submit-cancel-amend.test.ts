// Submittable documents under permissions: submit needs `submit`, cancel needs `cancel`, amend needs `amend` (and a
// cancelled original; the amendment is named <orig>-1, <orig>-2), update after submit only for allow_on_submit
// fields, no delete of a submitted document; through docstatus in an update body and the submit/cancel methods.
import { loadUser } from '../../runtime/auth/users';
import { cancelDocument, submitDocument } from '../../runtime/operations/document-operations';
import type { TestSite } from '../helpers/test-site';
import {
  adminPost,
  createPermissionSite,
  storedRow,
  USER_IDS,
  type PermissionUsers,
} from './helpers/permission-site';

let t: TestSite;
let users: PermissionUsers;
let hookCalls: string[];

beforeAll(async () => {
  ({ t, users } = await createPermissionSite());
  hookCalls = (t.site.registry.get('Perm Case')?.controller as { hookCalls: string[] }).hookCalls;
});
afterAll(() => t.close());

const url = (name: string) => `/api/v2/document/Perm Case/${name}`;
const draft = (extra: object = {}) => adminPost(t, 'Perm Case', { title: 'draft', ...extra });
const hooksOf = (name: string) =>
  hookCalls.filter((c) => c.startsWith(`${name}:`)).map((c) => c.slice(name.length + 1));

/** The three ways to submit or cancel: docstatus in the body, the v2 document method and v1 run_method. */
const MOVES: Record<
  string,
  (name: string, auth: string, to: 1 | 2) => Promise<{ status: number; body: any }>
> = {
  'docstatus in a PUT body': (name, auth, to) =>
    t.http.put(url(name)).set('Authorization', auth).send({ docstatus: to }),
  'v2 document method': (name, auth, to) =>
    t.http
      .post(`${url(name)}/method/${to === 1 ? 'submit' : 'cancel'}`)
      .set('Authorization', auth)
      .send({}),
  'v1 run_method': (name, auth, to) =>
    t.http
      .post(`/api/resource/Perm Case/${name}`)
      .query({ run_method: to === 1 ? 'submit' : 'cancel' })
      .set('Authorization', auth)
      .send({}),
};

describe.each(Object.keys(MOVES))('%s', (how) => {
  const move = (name: string, auth: string, to: 1 | 2) => MOVES[how]!(name, auth, to);

  test('submit: refused without the submit right (nothing changes), done with it (hooks run)', async () => {
    const doc = await draft();
    for (const user of ['writer', 'reader', 'nobody', 'owner'] as const) {
      const res = await move(doc.name, users[user], 1);
      expect([user, res.status]).toEqual([user, 403]);
    }
    expect(Number((await storedRow(t, 'Perm Case', doc.name))?.docstatus)).toBe(0);
    expect(hooksOf(doc.name)).toEqual([]);
    const res = await move(doc.name, users.submitter, 1);
    expect(res.status).toBe(200);
    expect(Number((await storedRow(t, 'Perm Case', doc.name))?.docstatus)).toBe(1);
    expect(hooksOf(doc.name)).toEqual(['before_submit', 'on_submit']);
  });

  test('cancel: refused without the cancel right, done with it (hooks run)', async () => {
    const doc = await draft({ docstatus: 1 });
    const refused = await move(doc.name, users.writer, 2);
    expect(refused.status).toBe(403);
    expect(Number((await storedRow(t, 'Perm Case', doc.name))?.docstatus)).toBe(1);
    const res = await move(doc.name, users.submitter, 2);
    expect(res.status).toBe(200);
    expect(Number((await storedRow(t, 'Perm Case', doc.name))?.docstatus)).toBe(2);
    expect(hooksOf(doc.name)).toEqual(['before_submit', 'on_submit', 'before_cancel', 'on_cancel']);
  });
});

test('creating a document already submitted needs create and submit', async () => {
  const refused = await t.http
    .post('/api/v2/document/Perm Case')
    .set('Authorization', users.writer)
    .send({ title: 'born submitted', docstatus: 1 });
  expect(refused.status).toBe(403);
  expect(await t.site.db.knex('tabPerm Case').where({ title: 'born submitted' })).toHaveLength(0);
  const ok = await t.http
    .post('/api/v2/document/Perm Case')
    .set('Authorization', users.submitter)
    .send({ title: 'born submitted', docstatus: 1 });
  expect(ok.status).toBe(201);
  expect(ok.body.data.docstatus).toBe(1);
});

test('after submit only allow_on_submit fields change; a submitted document cannot be deleted', async () => {
  const doc = await draft({ docstatus: 1 });
  const remark = await t.http
    .put(url(doc.name))
    .set('Authorization', users.submitter)
    .send({ remarks: 'late note' });
  expect(remark.status).toBe(200);
  const amount = await t.http.put(url(doc.name)).set('Authorization', users.submitter).send({ amount: 9 });
  expect(amount.status).toBe(400);
  expect(amount.body.exc_type).toBe('UpdateAfterSubmitError');
  const readerRemark = await t.http
    .put(url(doc.name))
    .set('Authorization', users.reader)
    .send({ remarks: 'reader' });
  expect(readerRemark.status).toBe(403);
  for (const auth of [t.adminToken, users.writer]) {
    const del = await t.http.delete(url(doc.name)).set('Authorization', auth);
    expect(del.status).toBeGreaterThanOrEqual(400);
    expect(del.status).toBeLessThan(500);
  }
  const stored = await storedRow(t, 'Perm Case', doc.name);
  expect([stored?.remarks, Number(stored?.amount), Number(stored?.docstatus)]).toEqual(['late note', 0, 1]);
});

describe('amend', () => {
  test('a cancelled case is amended as <orig>-1, that one (cancelled) as <orig>-2; needs the amend right', async () => {
    const orig = await draft({ docstatus: 1 });
    await t.http.put(url(orig.name)).set('Authorization', t.adminToken).send({ docstatus: 2 });
    const refused = await t.http
      .post('/api/v2/document/Perm Case')
      .set('Authorization', users.writer)
      .send({ title: 'amended', amended_from: orig.name });
    expect(refused.status).toBe(403);
    expect(await storedRow(t, 'Perm Case', `${orig.name}-1`)).toBeUndefined();
    const first = await t.http
      .post('/api/v2/document/Perm Case')
      .set('Authorization', users.submitter)
      .send({ title: 'amended', amended_from: orig.name });
    expect(first.status).toBe(201);
    expect(first.body.data).toMatchObject({ name: `${orig.name}-1`, amended_from: orig.name, docstatus: 0 });
    await t.http.put(url(first.body.data.name)).set('Authorization', users.submitter).send({ docstatus: 1 });
    await t.http.put(url(first.body.data.name)).set('Authorization', users.submitter).send({ docstatus: 2 });
    const second = await t.http
      .post('/api/v2/document/Perm Case')
      .set('Authorization', users.submitter)
      .send({ title: 'amended again', amended_from: first.body.data.name });
    expect(second.status).toBe(201);
    expect(second.body.data.name).toBe(`${orig.name}-2`);
  });

  test('a document that is not cancelled cannot be amended', async () => {
    for (const docstatus of [0, 1]) {
      const orig = await draft({ docstatus });
      const res = await t.http
        .post('/api/v2/document/Perm Case')
        .set('Authorization', t.adminToken)
        .send({ title: 'too early', amended_from: orig.name });
      expect(res.status).toBe(400);
      expect(res.body.exception).toContain('not cancelled');
      expect(await storedRow(t, 'Perm Case', `${orig.name}-1`)).toBeUndefined();
    }
  });
});

test('submit and cancel on a DocType that is not submittable do not exist', async () => {
  const region = await adminPost(t, 'Perm Region', { region_name: 'Flat' });
  const res = await t.http
    .post(`/api/v2/document/Perm Region/${region.name}/method/submit`)
    .set('Authorization', t.adminToken)
    .send({});
  expect(res.status).toBe(404);
  const body = await t.http
    .put(`/api/v2/document/Perm Region/${region.name}`)
    .set('Authorization', t.adminToken)
    .send({ docstatus: 1 });
  expect(body.status).toBe(400);
  expect(Number((await storedRow(t, 'Perm Region', 'Flat'))?.docstatus)).toBe(0);
});

test('submitDocument and cancelDocument (the operations frappe.client and scripts call) check the rights as the caller', async () => {
  const caller = async (id: string) => ({
    site: t.site,
    user: (await loadUser(t.site.db.knex, id))!,
    version: 2 as const,
  });
  const doc = await draft();
  await expect(submitDocument(await caller(USER_IDS.writer), 'Perm Case', doc.name)).rejects.toMatchObject({
    status: 403,
  });
  const submitted = await submitDocument(await caller(USER_IDS.submitter), 'Perm Case', doc.name);
  expect(submitted.doc.docstatus).toBe(1);
  expect(submitted.doc).not.toHaveProperty('secret_note');
  await expect(cancelDocument(await caller(USER_IDS.writer), 'Perm Case', doc.name)).rejects.toMatchObject({
    status: 403,
  });
  expect((await cancelDocument(await caller(USER_IDS.submitter), 'Perm Case', doc.name)).doc.docstatus).toBe(
    2,
  );
  expect(hooksOf(doc.name)).toEqual(['before_submit', 'on_submit', 'before_cancel', 'on_cancel']);
});
