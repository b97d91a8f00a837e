// Bulk jobs on the BullMQ backend, against the machine's Redis (REDIS_URL, default 127.0.0.1:6379) with a queue
// prefix of its own per site, removed afterwards: the shared suite.
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { bulkJobSuite } from './bulk-jobs-suite';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefixes: string[] = [];

afterAll(async () => {
  const redis = new Redis(REDIS_URL);
  try {
    for (const prefix of prefixes) {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
    }
  } finally {
    redis.disconnect();
  }
});

bulkJobSuite(() => {
  const prefix = `svc-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  prefixes.push(prefix);
  return { redisUrl: REDIS_URL, site: { job_backend: 'bullmq', job_worker: true, job_queue_prefix: prefix } };
});

// Declared after the suite's describe blocks, so it runs after their jobs.
describe('the backend', () => {
  test('the jobs went through BullMQ: they are under the site prefix in Redis', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      expect((await redis.keys(`${prefixes[0]}:jobs:*`)).length).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
  });
});
