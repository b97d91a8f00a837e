// The sandbox worker's program: sandbox-worker.ts and what it imports, bundled by esbuild into one script that a Worker
// runs with `eval: true`, so that it needs neither tsx nor a file path at run time. The build (bin/build.ts, and the
// runtime bundles of runtime/cli/runtime-bundle.ts) puts the bundle into the code as __SANDBOX_WORKER__; running from
// the TypeScript sources (tsx, jest) it is bundled on first use. Packages stay outside the bundle and are required from
// where the event loop's own require finds them (workerData.requireFrom).
import path from 'node:path';

/** The bundled program, defined by the build; undeclared when running from the sources. */
declare const __SANDBOX_WORKER__: string | undefined;

/** Bundles sandbox-worker.ts now (esbuild, a few tens of ms). */
export function bundleSandboxWorker(): string {
  const esbuild = require('esbuild') as typeof import('esbuild');
  const result = esbuild.buildSync({
    entryPoints: [path.join(__dirname, 'sandbox-worker.ts')],
    bundle: true,
    platform: 'node',
    format: 'iife',
    target: 'node20',
    write: false,
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    logLevel: 'silent',
    external: ['quickjs-emscripten', '@jitl/quickjs-wasmfile-release-sync/*'],
  });
  const code = result.outputFiles[0]?.text;
  if (!code) throw new Error('the sandbox worker could not be bundled');
  // An eval'd worker's require resolves from the working directory: packages are required from requireFrom instead.
  return (
    `(function (require) {${code}\n})(require('node:module').createRequire(` +
    `require('node:worker_threads').workerData.requireFrom));`
  );
}

let program: string | undefined;

/** The sandbox worker's program: the build's bundle, or one made from the sources now (once per process). */
export function sandboxWorkerProgram(): string {
  program ??= typeof __SANDBOX_WORKER__ === 'string' ? __SANDBOX_WORKER__ : bundleSandboxWorker();
  return program;
}
