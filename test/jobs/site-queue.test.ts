// Which job backend a configuration selects and whether `svc serve` runs the worker: BullMQ exactly when REDIS_URL is
// set (unless job_backend says otherwise), the worker in the app process by default only when embedded; a bad
// job_backend or job_queue_prefix is refused at start with a message naming the key.
import { DEFAULT_SITE_CONFIG, type ServiceConfig, type SiteConfig } from '../../runtime/config/config';
import { BullJobQueue } from '../../runtime/jobs/bullmq-queue';
import { EmbeddedJobQueue } from '../../runtime/jobs/embedded-queue';
import { jobBackend, runsJobWorker, siteJobQueue } from '../../runtime/jobs/site-queue';
import type { Site } from '../../runtime/site';

const config = (site: Partial<SiteConfig>, redisUrl?: string): ServiceConfig => ({
  port: 0,
  host: '127.0.0.1',
  databaseUrl: 'sqlite::memory:',
  adminPassword: 'x',
  adminPasswordDefaulted: false,
  site: { ...DEFAULT_SITE_CONFIG, ...site },
  ...(redisUrl ? { redisUrl } : {}),
});
const siteOf = (c: ServiceConfig) => ({ config: c }) as unknown as Site;
const REDIS = 'redis://127.0.0.1:6379';

test('the backend: BullMQ with REDIS_URL, embedded without; job_backend overrides', () => {
  expect(jobBackend(config({}))).toBe('embedded');
  expect(jobBackend(config({}, REDIS))).toBe('bullmq');
  expect(jobBackend(config({ job_backend: 'embedded' }, REDIS))).toBe('embedded');
  expect(jobBackend(config({ job_backend: 'bullmq' }, REDIS))).toBe('bullmq');
  expect(siteJobQueue(siteOf(config({})))).toBeInstanceOf(EmbeddedJobQueue);
  expect(siteJobQueue(siteOf(config({}, REDIS)))).toBeInstanceOf(BullJobQueue);
});

test('the worker runs in svc serve by default only when embedded; job_worker (or --with-worker) decides', () => {
  expect(runsJobWorker(config({}))).toBe(true);
  expect(runsJobWorker(config({}, REDIS))).toBe(false);
  expect(runsJobWorker(config({ job_worker: true }, REDIS))).toBe(true);
  expect(runsJobWorker(config({ job_worker: false }))).toBe(false);
});

test('bad settings are refused at start, naming the key', () => {
  expect(() => jobBackend(config({ job_backend: 'bullmq' }))).toThrow(/job_backend "bullmq" needs REDIS_URL/);
  expect(() => jobBackend(config({ job_backend: 'redis' as never }, REDIS))).toThrow(/job_backend must be/);
  for (const prefix of ['', 'has space', 'a'.repeat(101), 7, '{hash}'])
    expect(() => siteJobQueue(siteOf(config({ job_queue_prefix: prefix as never }, REDIS)))).toThrow(
      /job_queue_prefix must be/,
    );
  expect(siteJobQueue(siteOf(config({ job_queue_prefix: 'site-a:jobs.1' }, REDIS)))).toBeInstanceOf(
    BullJobQueue,
  );
});
