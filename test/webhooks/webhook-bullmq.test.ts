// Deliveries through BullMQ (REDIS_URL, default 127.0.0.1:6379, a queue prefix of its own removed afterwards): a 500
// then a 200 is retried and succeeds, and the jobs were BullMQ's.
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { createTodo, createWebhook, logRows, startReceiver, waitFor, type Receiver } from './receiver';

jest.setTimeout(30_000);

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `svc-webhooks-${process.pid}-${randomBytes(4).toString('hex')}`;

let t: TestSite;
let receiver: Receiver;

afterAll(async () => {
  await receiver?.close();
  await t?.close();
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
});

it('retries a 500 through BullMQ and succeeds', async () => {
  t = await createTestSite({
    redisUrl: REDIS_URL,
    site: {
      job_backend: 'bullmq',
      job_worker: true,
      job_queue_prefix: prefix,
      webhook_allowed_hosts: ['127.0.0.1'],
      webhook_retry_schedule: [0.2, 0.2],
    },
  });
  receiver = await startReceiver(0, [500, 200]);
  expect((await createWebhook(t, { name: 'bull', request_url: receiver.url })).status).toBe(201);
  await createTodo(t);
  await waitFor(async () => (await logRows(t)).some((r) => r.status === 'Success'), 20_000, 'Success');
  expect((await logRows(t)).map((r) => r.status)).toEqual(['Failed', 'Success']);
  expect(receiver.requests).toHaveLength(2);
  const redis = new Redis(REDIS_URL);
  try {
    expect((await redis.keys(`${prefix}:jobs:*`)).length).toBeGreaterThan(0);
  } finally {
    redis.disconnect();
  }
});
