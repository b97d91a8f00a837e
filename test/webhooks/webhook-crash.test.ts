// A crash loses no delivery: a real `svc worker` child is killed with SIGKILL while its attempt waits on the
// receiver; a new worker takes the job over once its lease has run out and sends the request again, with the same
// webhook-id, and the delivery ends Success.
import { startSvc, type SvcChild } from '../jobs/svc-child';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { createTodo, createWebhook, logRows, startReceiver, waitFor, type Receiver } from './receiver';

jest.setTimeout(90_000);

const WORKER_SITE = {
  webhook_allowed_hosts: ['127.0.0.1'],
  webhook_retry_schedule: [0.2],
  job_lease_seconds: 1,
  job_poll_ms: 50,
};

let t: TestSite;
let receiver: Receiver;
const children: SvcChild[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.proc.exitCode === null && child.proc.signalCode === null) {
      child.proc.kill('SIGKILL');
      await child.exited;
    }
    child.cleanup();
  }
  await receiver?.close();
  await t?.close();
});

it('kill -9 of the worker mid-request: the delivery is sent again and succeeds', async () => {
  t = await createTestSite({ site: { ...WORKER_SITE, job_worker: false } });
  receiver = await startReceiver(0, ['hang', 200]);
  expect((await createWebhook(t, { name: 'durable', request_url: receiver.url, timeout: 60 })).status).toBe(
    201,
  );
  await createTodo(t, { description: 'must arrive' });
  const first = startSvc(t, ['worker'], WORKER_SITE);
  children.push(first);
  await waitFor(() => receiver.requests.length >= 1, 60_000, 'the first attempt');
  first.proc.kill('SIGKILL');
  expect((await first.exited).signal).toBe('SIGKILL');
  expect((await logRows(t)).map((r) => r.status)).toEqual(['Queued']);
  children.push(startSvc(t, ['worker'], WORKER_SITE));
  await waitFor(async () => (await logRows(t)).some((r) => r.status === 'Success'), 60_000, 'Success');
  const rows = await logRows(t);
  expect(rows.map((r) => [r.status, Number(r.attempts)])).toEqual([['Success', 1]]);
  expect(receiver.requests).toHaveLength(2);
  expect(receiver.requests[1]?.headers['webhook-id']).toBe(receiver.requests[0]?.headers['webhook-id']);
  expect(JSON.parse(receiver.requests[1]?.body ?? '{}')).toMatchObject({ description: 'must arrive' });
});
