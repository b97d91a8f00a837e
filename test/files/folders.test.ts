// Frappe's File folders: every site has Home and Home/Attachments; a folder is a File with is_folder named by its path;
// uploads go into an existing folder (Home by default); a missing folder or a file given as folder is 400 and nothing
// remains; Home and Attachments are never deleted, a folder only when empty; a folder is never renamed or moved.
import { openSite, closeSite } from '../../runtime/bootstrap';
import { registry } from '../../generated';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { everyStoredFile, fileRows, upload } from './file-helpers';

let t: TestSite;
let alice: string;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  alice = await createUser(t, 'alice-folders@example.com', []);
});
afterAll(() => t.close());

const admin = () => t.adminToken;

async function newFolder(fields: Record<string, unknown>, auth = admin()) {
  return t.http
    .post('/api/resource/File')
    .set('Authorization', auth)
    .send({ is_folder: 1, ...fields });
}

test('a new site has the Home and Home/Attachments folders; opening it again adds none', async () => {
  const home = await t.http.get('/api/resource/File/Home').set('Authorization', admin());
  expect(home.status).toBe(200);
  expect(home.body.data).toMatchObject({ name: 'Home', file_name: 'Home', is_folder: 1, is_home_folder: 1 });
  expect(home.body.data.folder ?? null).toBeNull();
  const attachments = await t.http.get('/api/resource/File/Home/Attachments').set('Authorization', admin());
  expect(attachments.status).toBe(200);
  expect(attachments.body.data).toMatchObject({
    file_name: 'Attachments',
    folder: 'Home',
    is_folder: 1,
    is_attachments_folder: 1,
  });
  const again = await openSite(t.site.config, registry);
  await closeSite(again);
  expect(
    await t.site.db.knex('tabFile').where('is_folder', 1).whereIn('name', ['Home', 'Home/Attachments']),
  ).toHaveLength(2);
});

test('a folder is a File named by its path, in Home unless another folder is given; nested folders work', async () => {
  const reports = await newFolder({ file_name: 'Reports' });
  expect(reports.status).toBe(201);
  expect(reports.body.data).toMatchObject({
    name: 'Home/Reports',
    file_name: 'Reports',
    folder: 'Home',
    is_folder: 1,
    is_private: 0,
  });
  expect(reports.body.data.file_url ?? null).toBeNull();
  const year = await newFolder({ file_name: '2026', folder: 'Home/Reports', name: 'chosen-by-client' });
  expect(year.status).toBe(201);
  expect(year.body.data.name).toBe('Home/Reports/2026');
  const listed = await t.http
    .get('/api/resource/File')
    .query({ filters: JSON.stringify([['folder', '=', 'Home/Reports']]), fields: '["name","is_folder"]' })
    .set('Authorization', admin());
  expect(listed.body.data).toEqual([{ name: 'Home/Reports/2026', is_folder: 1 }]);
  const twice = await newFolder({ file_name: 'Reports' });
  expect(twice.status).toBe(409);
});

test('frappe.core.api.file.create_new_folder makes a folder; an existing one is answered as it is', async () => {
  const made = await t.http
    .post('/api/method/frappe.core.api.file.create_new_folder')
    .set('Authorization', alice)
    .send({ file_name: 'Invoices', folder: 'Home' });
  expect(made.status).toBe(200);
  expect(made.body.message).toMatchObject({ name: 'Home/Invoices', is_folder: 1, folder: 'Home' });
  const again = await t.http
    .post('/api/method/frappe.core.api.file.create_new_folder')
    .set('Authorization', alice)
    .send({ file_name: 'Invoices', folder: 'Home' });
  expect(again.status).toBe(200);
  expect(again.body.message.name).toBe('Home/Invoices');
  const missing = await t.http
    .post('/api/method/frappe.core.api.file.create_new_folder')
    .set('Authorization', alice)
    .send({ file_name: 'X', folder: 'Home/Nowhere' });
  expect(missing.status).toBe(400);
  expect(missing.body.exc_type).toBe('LinkValidationError');
  const noName = await t.http
    .post('/api/method/frappe.core.api.file.create_new_folder')
    .set('Authorization', alice)
    .send({ folder: 'Home' });
  expect(noName.status).toBe(400);
});

test('upload_file puts the File in the folder given (Home by default); a File attached without a folder goes to Home/Attachments', async () => {
  await newFolder({ file_name: 'Uploads' });
  const into = await upload(t, alice, 'in a folder', 'in.txt', { folder: 'Home/Uploads' });
  expect(into.status).toBe(200);
  expect(into.body.message.folder).toBe('Home/Uploads');
  const plain = await upload(t, alice, 'no folder', 'plain.txt');
  expect(plain.body.message.folder).toBe('Home');
  const holder = await t.http
    .post('/api/resource/File Holder')
    .set('Authorization', alice)
    .send({ title: 'h' });
  const attached = await t.http.post('/api/resource/File').set('Authorization', alice).send({
    file_url: plain.body.message.file_url,
    attached_to_doctype: 'File Holder',
    attached_to_name: holder.body.data.name,
  });
  expect(attached.status).toBe(201);
  expect(attached.body.data.folder).toBe('Home/Attachments');
});

test.each([
  ['a missing folder', 'Home/Nowhere', 'LinkValidationError'],
  ['a traversal', '../../etc', 'LinkValidationError'],
  ['a file given as folder', 'FILE', 'ValidationError'],
])('upload_file into %s is 400 and nothing remains', async (_what, folder, excType) => {
  const file = await upload(t, alice, 'a plain file', 'plainfile.txt');
  const target = folder === 'FILE' ? (file.body.message.name as string) : folder;
  const before = everyStoredFile(t);
  const rows = (await fileRows(t)).length;
  const res = await upload(t, alice, `bytes for ${folder}`, 'refused.txt', { folder: target });
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toBe(excType);
  expect((await fileRows(t)).length).toBe(rows);
  expect(everyStoredFile(t)).toEqual(before);
});

test.each([
  ['a file_url', { file_name: 'F1', file_url: '/files/x.txt' }],
  ['an attachment', { file_name: 'F2', attached_to_doctype: 'User', attached_to_name: 'Administrator' }],
  ['no name', { file_name: '' }],
  ['is_home_folder', { file_name: 'F3', is_home_folder: 1 }],
  ['is_attachments_folder', { file_name: 'F4', is_attachments_folder: 1 }],
  ['a missing parent', { file_name: 'F5', folder: 'Home/Nope' }],
  ['a path over 140 characters', { file_name: 'x'.repeat(139) }],
])('a new folder with %s is 400', async (_what, fields) => {
  const rows = (await fileRows(t)).length;
  const res = await newFolder(fields);
  expect(res.status).toBe(400);
  expect((await fileRows(t)).length).toBe(rows);
});

test('a folder is never renamed or moved, a file never becomes a folder; a file moves to another folder', async () => {
  await newFolder({ file_name: 'Fixed' });
  const rename = await t.http
    .put('/api/resource/File/Home/Fixed')
    .set('Authorization', admin())
    .send({ file_name: 'Other' });
  expect(rename.status).toBe(400);
  const move = await t.http
    .put('/api/resource/File/Home/Fixed')
    .set('Authorization', admin())
    .send({ folder: 'Home/Attachments' });
  expect(move.status).toBe(400);
  const file = await upload(t, alice, 'mover', 'mover.txt');
  const name = file.body.message.name as string;
  const toFolder = await t.http
    .put(`/api/resource/File/${name}`)
    .set('Authorization', alice)
    .send({ is_folder: 1 });
  expect(toFolder.status).toBe(400);
  const moved = await t.http
    .put(`/api/resource/File/${name}`)
    .set('Authorization', alice)
    .send({ folder: 'Home/Fixed' });
  expect(moved.status).toBe(200);
  expect(moved.body.data.folder).toBe('Home/Fixed');
  const intoFile = await t.http
    .put(`/api/resource/File/${name}`)
    .set('Authorization', alice)
    .send({ folder: name });
  expect(intoFile.status).toBe(400);
});

test('Home and Attachments are never deleted; a folder only when empty (FolderNotEmpty)', async () => {
  for (const name of ['Home', 'Home/Attachments']) {
    const res = await t.http.delete(`/api/resource/File/${name}`).set('Authorization', admin());
    expect(res.status).toBe(400);
  }
  await newFolder({ file_name: 'Full' });
  const file = await upload(t, admin(), 'content of full', 'full.txt', { folder: 'Home/Full' });
  const refused = await t.http.delete('/api/resource/File/Home/Full').set('Authorization', admin());
  expect(refused.status).toBe(400);
  expect(refused.body.exc_type).toBe('FolderNotEmpty');
  expect(
    (await t.http.delete(`/api/resource/File/${file.body.message.name}`).set('Authorization', admin()))
      .status,
  ).toBe(202);
  const emptied = await t.http.delete('/api/resource/File/Home/Full').set('Authorization', admin());
  expect(emptied.status).toBe(202);
  expect(await t.site.db.knex('tabFile').where('name', 'Home/Full').first()).toBeUndefined();
});
