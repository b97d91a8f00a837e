// A write undone because another write of its group commit ended the shared transaction (a deadlock, a failed
// statement on SQLite) is answered 503 ServiceUnavailableError with Retry-After: the client's request was sound and
// may be sent again. It was a 500 before.
import Koa from 'koa';
import request from 'supertest';
import { BatchRolledBackError } from '../../runtime/db/write-transaction';
import { createErrorHandler } from '../../runtime/middleware/error-handler';

test('BatchRolledBackError is 503 with Retry-After, in the error shape of every other error', async () => {
  const app = new Koa();
  const serverErrors: unknown[] = [];
  app.use(createErrorHandler({ developerMode: false, onServerError: (err) => serverErrors.push(err) }));
  app.use(() => {
    throw new BatchRolledBackError(Object.assign(new Error('Deadlock found'), { code: 'ER_LOCK_DEADLOCK' }));
  });
  const res = await request(app.callback()).post('/api/v2/document/ToDo').send({});
  expect(res.status).toBe(503);
  expect(res.headers['retry-after']).toBe('1');
  expect(res.body.exc_type).toBe('ServiceUnavailableError');
  expect(JSON.stringify(res.body)).not.toMatch(/Deadlock/);
  expect(serverErrors).toEqual([]);
});
