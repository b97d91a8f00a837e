// The commands of `svc` (generate, migrate, serve, worker, client, add-user, set-password, generate-keys, import,
// export) and their dispatch.
import { attachRealtime, createApp } from '../app';
import { openSite } from '../bootstrap';
import { checkRedisAtStart } from '../redis/site-redis';
import { loadConfig } from '../config/config';
import { exitOnSignals, serve, stopWorker } from './serve';
import { jobBackend } from '../jobs/site-queue';
import { addUser, generateKeysFor, setPassword } from './user-commands';
import { doctypesDir, generatedDir, compiledPatchesRoot, projectRoot } from './layout';
import { readPatchList } from '../patches/patch-list';
import { warnStaleDocTypes } from './stale-doctypes';
import { exportCommand, importCommand } from './data-commands';
import { loadRegistry } from './load-registry';
import { MIGRATE_HELP, migrateCommand } from './migrate-command';
import { loadAuthHooks } from '../auth/auth-hooks';
import { scriptIndex } from '../scripts/script-store';

const COMMANDS: Record<string, { help: string; run: (argv: string[]) => Promise<number> }> = {
  // The generator (ts-morph, TypeScript) is loaded only for this command, never by the server.
  generate: {
    help: 'Usage: svc generate [--doctypes DIR [DIR ...]] [--out DIR] [--quiet]\n\nRewrites --out (default generated) from the DocTypes under the --doctypes folders (default doctypes).',
    run: (argv) =>
      (require('../../generator/cli') as typeof import('../../generator/cli')).generateCommand(argv),
  },
  migrate: { help: MIGRATE_HELP, run: migrateCommand },
  serve: {
    help: 'Usage: svc serve [--with-worker]\n\nMigrates, creates the site on first start, and serves the API on HOST:PORT (default 127.0.0.1:8000).\nBackground jobs run in this process with the embedded backend (site config job_worker: false turns that off);\nwith REDIS_URL (BullMQ) they run in `svc worker` processes, or here too with --with-worker (or job_worker: true).',
    run: async (argv) => {
      const started = Date.now();
      const config = loadConfig();
      const unknown = argv.filter((a) => a !== '--with-worker');
      if (unknown.length) {
        console.error(`unknown option ${unknown[0]}`);
        return 1;
      }
      if (argv.includes('--with-worker')) config.site.job_worker = true;
      const site = await openSite(config, await loadRegistry(), {
        patches: readPatchList(projectRoot(), compiledPatchesRoot()),
      });
      // A Redis unreachable at start-up is a warning (the breaker logs it); the service follows it as it comes back.
      await checkRedisAtStart(site);
      if (site.created && config.adminPasswordDefaulted)
        console.warn(
          'warning: Administrator was created with the default password "admin"; set ADMIN_PASSWORD',
        );
      // The site's Server Scripts are read now: when there are any, their sandbox on this thread loads during start-up.
      void scriptIndex(site).catch(() => undefined);
      const authHooks = loadAuthHooks(doctypesDir());
      const app = createApp(site, { generatedDir: generatedDir(), authHooks });
      const served = serve(app, site, { host: config.host, port: config.port }, config.site, () => {
        console.log(
          `serving ${site.registry.all().length} DocTypes on http://${config.host}:${config.port} (${config.databaseUrl.split(':')[0]}, ready in ${Date.now() - started} ms)`,
        );
      });
      attachRealtime(served.server, site, { authHooks });
      exitOnSignals(served);
      // Once listening: a DocType JSON edited but not regenerated is served as generated; one warning line each.
      served.server.once(
        'listening',
        () => void warnStaleDocTypes(doctypesDir(), generatedDir()).catch(() => undefined),
      );
      return new Promise<number>(() => undefined);
    },
  },
  worker: {
    help: 'Usage: svc worker\n\nRuns background jobs only (no HTTP): BullMQ on REDIS_URL, or the embedded jobs table without it. Start one or\nmany, on any machine that reaches the database (and Redis). SIGTERM lets running jobs finish their current items\nand puts the rest back in the queue.',
    run: async (argv) => {
      if (argv.length) {
        console.error(`unknown option ${String(argv[0])}`);
        return 1;
      }
      const config = loadConfig();
      config.site.job_worker = true;
      const site = await openSite(config, await loadRegistry());
      exitOnSignals({ shutdown: (reason) => stopWorker(site, reason, config.site.shutdown_timeout) });
      console.log(
        `running jobs (${jobBackend(config)}, concurrency ${config.site.job_concurrency}, ${config.databaseUrl.split(':')[0]})`,
      );
      return new Promise<number>(() => undefined);
    },
  },
  client: {
    help: 'Usage: svc client --out DIR [--name NAME] [--version VERSION]\n\nWrites the typed client of the generated folder (SVC_GENERATED, default generated) to DIR as a\npublishable package: src/ (TypeScript), dist/ (ESM, CommonJS, declarations), package.json.',
    run: (argv) =>
      (require('./client-package') as typeof import('./client-package')).writeClientPackage(argv),
  },
  'add-user': {
    help: 'Usage: svc add-user EMAIL --first-name NAME [--password PWD] [--role ROLE ...]\n\nCreates an enabled System User with the given roles.',
    run: addUser,
  },
  'set-password': {
    help: "Usage: svc set-password USER PASSWORD\n\nSets a user's login password.",
    run: setPassword,
  },
  import: {
    help: 'Usage: svc import FILE --doctype DOCTYPE [--update]\n\nImports a CSV or XLSX file in the Data Import template layout (docs/data-import.md) as Administrator:\nevery document through the normal document path, a progress bar on stderr, the failed lines listed.\n--update saves existing documents by their name column instead of inserting new ones.',
    run: importCommand,
  },
  export: {
    help: 'Usage: svc export --doctype DOCTYPE [--format csv|xlsx|json] [--fields JSON] [--filters JSON] [--order-by TEXT] [--out FILE]\n\nWrites every matching document (as Administrator) in the Data Import template layout to --out or stdout,\nwith a progress bar on stderr.',
    run: exportCommand,
  },
  'generate-keys': {
    help: "Usage: svc generate-keys USER\n\nKeeps the user's API key (creates one if missing), makes a new API secret and prints both.",
    run: generateKeysFor,
  },
};

const USAGE = `Usage: svc <command> [options]\n\nCommands:\n${Object.keys(COMMANDS)
  .map((c) => `  ${c}`)
  .join('\n')}\n\nRun svc <command> --help for a command's options.`;

/** Runs the command named by argv[0]; returns the exit code. */
export async function runCommand(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h') {
    console.log(USAGE);
    return name ? 0 : 1;
  }
  const command = COMMANDS[name];
  if (!command) {
    console.error(`unknown command ${name}\n\n${USAGE}`);
    return 1;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(command.help);
    return 0;
  }
  return command.run(rest);
}
