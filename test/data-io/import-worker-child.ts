// A worker process for the import crash test: opens the site at argv[2] (files under argv[3]) and runs its embedded job
// worker until killed.
import { openSite } from '../../runtime/bootstrap';
import { jobQueueOf } from '../../runtime/jobs/job-queue';
import { DEFAULT_SITE_CONFIG } from '../../runtime/config/config';
import { registry } from '../../generated';

async function main(): Promise<void> {
  const site = await openSite(
    {
      port: 0,
      host: '127.0.0.1',
      databaseUrl: String(process.argv[2]),
      adminPassword: 'admin-test-password',
      adminPasswordDefaulted: false,
      site: { ...DEFAULT_SITE_CONFIG, job_worker: true, job_lease_seconds: 1, job_poll_ms: 50 },
      filesPath: String(process.argv[3]),
    },
    registry,
  );
  jobQueueOf(site)?.start();
  process.stdout.write('ready\n');
  setInterval(() => undefined, 1000);
}

void main();
