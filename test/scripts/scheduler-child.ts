// A process for the scheduler test: opens the site at argv[2] without a job worker, ticks the scheduler at each moment
// of argv[3] (comma-separated ms since the epoch) and prints the ids of the jobs it queued as JSON.
import { closeSite, openSite } from '../../runtime/bootstrap';
import { DEFAULT_SITE_CONFIG } from '../../runtime/config/config';
import { tickScheduler } from '../../runtime/scripts/script-scheduler';
import { registry } from '../../generated';

async function main(): Promise<void> {
  const site = await openSite(
    {
      port: 0,
      host: '127.0.0.1',
      databaseUrl: String(process.argv[2]),
      adminPassword: 'admin-test-password',
      adminPasswordDefaulted: false,
      site: { ...DEFAULT_SITE_CONFIG, job_worker: false },
    },
    registry,
  );
  const queued: string[] = [];
  for (const moment of String(process.argv[3]).split(',').map(Number))
    queued.push(...(await tickScheduler(site, moment)));
  await closeSite(site);
  process.stdout.write(JSON.stringify(queued));
}

main().catch((err: unknown) => {
  process.stderr.write(`${String((err as Error)?.stack ?? err)}\n`);
  process.exit(1);
});
