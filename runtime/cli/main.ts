// `svc`: the command line — generate, migrate, serve, add-user, set-password, generate-keys (see commands.ts).
import { installCompiledRuntimeBundle, installRuntimeBundle } from './runtime-bundle';

/** Runs the CLI; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  // Before anything requires the runtime, so that the commands get the bundled modules. The compiled build
  // (dist/, `npm run build`) has its bundle built already: no esbuild, no tsx.
  if (__filename.endsWith('.ts')) await installRuntimeBundle();
  else installCompiledRuntimeBundle();
  return (require('./commands') as typeof import('./commands')).runCommand(argv);
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code !== 0 || process.argv[2] !== 'serve') process.exit(code);
    },
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
