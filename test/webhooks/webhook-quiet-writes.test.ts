// Webhooks do not fire during imports and patches (CONTRACT section 9): a Data Import of ToDos and a patch's saveDoc
// write no Webhook Request Log row and send nothing, while an ordinary create does.
import { runPatch } from '../../runtime/patches/patch-context';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { importFile } from '../data-io/import-helpers';
import { createTodo, createWebhook, logRows, startReceiver, waitFor, type Receiver } from './receiver';

let t: TestSite;
let receiver: Receiver;
beforeAll(async () => {
  t = await createTestSite({ site: { webhook_allowed_hosts: ['127.0.0.1'], job_poll_ms: 50 } });
  receiver = await startReceiver(0, [200]);
  expect((await createWebhook(t, { name: 'on-insert', request_url: receiver.url })).status).toBe(201);
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

test('an import inserts its ToDos without a delivery; a create afterwards has one', async () => {
  const { job } = await importFile(
    t,
    t.adminToken,
    'ToDo',
    'description\nimported one\nimported two\n',
    'todos.csv',
  );
  expect(job.status).toBe('finished');
  expect(await t.site.db.knex('tabToDo').where('description', 'like', 'imported%')).toHaveLength(2);
  await createTodo(t);
  await waitFor(() => receiver.requests.length >= 1, 5000, 'the create delivery');
  await new Promise((r) => setTimeout(r, 300));
  expect(receiver.requests).toHaveLength(1);
  expect(await logRows(t)).toHaveLength(1);
});

test("a patch's saveDoc inserts without a delivery", async () => {
  const before = (await logRows(t)).length;
  await runPatch(
    t.site,
    (ctx) => ctx.saveDoc({ doctype: 'ToDo', description: 'patched' }),
    async () => undefined,
  );
  await new Promise((r) => setTimeout(r, 300));
  expect(await logRows(t)).toHaveLength(before);
});
