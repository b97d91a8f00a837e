// upload_file's callers: frappe-js-sdk's file.uploadFile unchanged, session CSRF (header or form field), Guest 401
// unless System Settings allow guest uploads, and an upload aborted mid-body leaves nothing behind.
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FrappeApp } from 'frappe-js-sdk';
import { login, setSettings, type LoggedIn } from '../auth/auth-helpers';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { everyStoredFile, fileRows, storedNames, upload } from './file-helpers';

let t: TestSite;
let server: Server;
let url: string;
let session: LoggedIn;
beforeAll(async () => {
  t = await createTestSite();
  await createUser(t, 'carol-upload@example.com', [], 'carol-password-1');
  session = await login(t, 'carol-upload@example.com', 'carol-password-1');
  server = t.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

test('frappe-js-sdk file.uploadFile works unchanged (token auth, multipart, File in message)', async () => {
  const app = new FrappeApp(url, {
    useToken: true,
    token: () => t.adminToken.replace(/^token /, ''),
    type: 'token',
  });
  const todo = await t.http
    .post('/api/resource/ToDo')
    .set('Authorization', t.adminToken)
    .send({ description: 'sdk' });
  const file = new File([Buffer.from('uploaded by the sdk')], 'sdk.txt', { type: 'text/plain' });
  const res = await app.file().uploadFile(file, {
    isPrivate: true,
    doctype: 'ToDo',
    docname: todo.body.data.name,
    fieldname: 'description',
  });
  expect(res.status).toBe(200);
  expect(res.data.message).toMatchObject({
    file_name: 'sdk.txt',
    file_url: '/private/files/sdk.txt',
    is_private: 1,
    attached_to_doctype: 'ToDo',
    attached_to_name: todo.body.data.name,
  });
});

test('a session upload without the CSRF token is 400 and stores nothing; the header or the form field passes', async () => {
  const before = everyStoredFile(t);
  const refused = await t.http
    .post('/api/method/upload_file')
    .set('Cookie', session.cookie)
    .attach('file', Buffer.from('no token'), 'nt.txt');
  expect(refused.status).toBe(400);
  expect(refused.body.exc_type).toBe('CSRFTokenError');
  expect(everyStoredFile(t)).toEqual(before);
  const header = await t.http
    .post('/api/method/upload_file')
    .set('Cookie', session.cookie)
    .set('X-Frappe-CSRF-Token', session.csrf)
    .attach('file', Buffer.from('header token'), 'ht.txt');
  expect(header.status).toBe(200);
  const field = await t.http
    .post('/api/method/upload_file')
    .set('Cookie', session.cookie)
    .field('csrf_token', session.csrf)
    .attach('file', Buffer.from('field token'), 'ft.txt');
  expect(field.status).toBe(200);
  expect(field.body.message.owner).toBe('carol-upload@example.com');
});

test('a Guest upload is 401 unless System Settings allow_guests_to_upload_files', async () => {
  const before = everyStoredFile(t);
  const refused = await upload(t, undefined, 'guest bytes', 'guest.txt');
  expect(refused.status).toBe(401);
  expect(refused.body.exc_type).toBe('AuthenticationError');
  expect(everyStoredFile(t)).toEqual(before);
  await setSettings(t, { allow_guests_to_upload_files: 1 });
  try {
    const allowed = await upload(t, undefined, 'guest bytes', 'guest.txt');
    expect(allowed.status).toBe(200);
    expect(allowed.body.message.owner).toBe('Guest');
    const attach = await upload(t, undefined, 'guest attach', 'ga.txt', {
      doctype: 'User',
      docname: 'Administrator',
    });
    expect(attach.status).toBe(401);
  } finally {
    await setSettings(t, { allow_guests_to_upload_files: 0 });
  }
});

test('an upload aborted mid-body leaves no row, no bytes and no temp file', async () => {
  const before = everyStoredFile(t);
  const rows = (await fileRows(t)).length;
  let sawTemp = false;
  const boundary = 'abortboundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="aborted.bin"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  await new Promise<void>((resolve) => {
    const req = httpRequest(`${url}/api/method/upload_file`, {
      method: 'POST',
      headers: {
        Authorization: t.adminToken,
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': String(head.length + 1024 * 1024),
      },
    });
    req.on('error', () => resolve());
    req.write(head);
    req.write(Buffer.alloc(256 * 1024, 7), async () => {
      // The body is being streamed to a temporary file when the client goes away.
      for (let i = 0; i < 100 && storedNames(t, 'tmp/uploads').length === 0; i++)
        await new Promise((r) => setTimeout(r, 10));
      sawTemp = storedNames(t, 'tmp/uploads').length > 0;
      req.destroy();
    });
    req.on('close', () => resolve());
  });
  // The server notices the abort and removes the temp file on its own schedule: wait for it (bounded).
  for (let i = 0; i < 50 && everyStoredFile(t).length !== before.length; i++)
    await new Promise((r) => setTimeout(r, 50));
  expect(sawTemp).toBe(true);
  expect(everyStoredFile(t)).toEqual(before);
  expect((await fileRows(t)).length).toBe(rows);
});
