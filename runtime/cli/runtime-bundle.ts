// The runtime bundle: every module of runtime/ (but the command line's own, runtime/cli) compiled by esbuild into one
// cached file, so that `svc` does not transpile and resolve ~90 TypeScript modules one by one through tsx at each start.
// Installing it puts each bundled module into Node's module cache under its own .ts path: whatever requires a runtime
// module afterwards (the command line, the registry bundle, controllers, auth hooks) gets that one instance.
// The compiled build (`npm run build`) holds the same bundle as dist/runtime.bundle.js, installed under the dist/ paths.
import { existsSync, readdirSync } from 'node:fs';
import Module from 'node:module';
import path from 'node:path';
import {
  PACKAGE_ROOT,
  buildBundle,
  bundlePaths,
  compiledExternal,
  importGraph,
  isFresh,
} from './cached-bundle';

/** Bumped when the way the runtime bundle is built changes. */
const BUNDLE_FORMAT = 4;
const RUNTIME = path.join(PACKAGE_ROOT, 'runtime');
const CLI = path.join(RUNTIME, 'cli');
/** The compiled build's bundle, relative to dist/. */
const COMPILED_BUNDLE = 'runtime.bundle.js';

/**
 * The sandbox worker's program put into the bundle (runtime/scripts/worker-bundle.ts): a bundle does not run from the
 * sources' folder, where the program would otherwise be bundled from. Required here, after the check that no runtime
 * module is loaded yet.
 */
function sandboxWorkerDefine(): Record<string, string> {
  const { bundleSandboxWorker } =
    require('../scripts/worker-bundle') as typeof import('../scripts/worker-bundle');
  return { __SANDBOX_WORKER__: JSON.stringify(bundleSandboxWorker()) };
}

/** True for the files the bundle holds: runtime/ but runtime/cli. */
function isBundled(file: string): boolean {
  return file.startsWith(RUNTIME + path.sep) && !file.startsWith(CLI + path.sep);
}

/** The runtime's modules, relative to the package root: every .ts file under runtime/ outside runtime/cli. */
function runtimeModules(dir = RUNTIME): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return file === CLI ? [] : runtimeModules(file);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')
      ? [path.relative(PACKAGE_ROOT, file)]
      : [];
  });
}

/** The bundle's entry: each module's namespace by its path, so that installing can register every one of them. */
function entrySource(modules: string[]): string {
  const imports = modules.map((file, i) => `import * as m${i} from ${JSON.stringify(`./${file}`)};`);
  const table = modules.map((file, i) => `  ${JSON.stringify(file)}: m${i},`);
  return `${imports.join('\n')}\nexport const modules = {\n${table.join('\n')}\n};\n`;
}

/**
 * Loads the runtime from its bundle (built when missing or stale) and registers its modules; a no-op when the bundle
 * cannot be built here or SVC_BUNDLE=0, and then the runtime loads through tsx as usual.
 */
export async function installRuntimeBundle(): Promise<void> {
  if (process.env.SVC_BUNDLE === '0') return;
  // A runtime module loaded already (through tsx) would exist twice: then the runtime stays on tsx.
  if (Object.keys(require.cache).some(isBundled)) return;
  const paths = bundlePaths(`runtime:${BUNDLE_FORMAT}:${PACKAGE_ROOT}`);
  const bundle = isFresh(paths)
    ? paths.bundle
    : await buildBundle(paths, {
        entry: {
          stdin: {
            contents: entrySource(runtimeModules()),
            resolveDir: PACKAGE_ROOT,
            sourcefile: 'runtime-modules.ts',
            loader: 'ts',
          },
          // One scope for ~90 modules renames clashing declarations; their functions and classes keep their own names.
          keepNames: true,
          // Stack traces (developer-mode tracebacks) still name runtime/ files and lines, as with tsx.
          sourcemap: 'inline',
          define: sandboxWorkerDefine(),
        },
        owns: isBundled,
        codeCache: false,
      });
  if (!bundle) return;
  // Through require, unlike the registry bundle: Node then applies the source map; compiling ~200 KB is quick anyway.
  register(bundle, '.ts');
}

/** Requires a runtime bundle and puts each of its modules into Node's module cache under its file name. */
function register(bundle: string, extension: '.ts' | '.js'): void {
  const { modules } = require(bundle) as { modules: Record<string, object> };
  for (const [file, namespace] of Object.entries(modules)) {
    const filename = path.join(PACKAGE_ROOT, file.replace(/\.ts$/, extension));
    // What a transpiled module exports is marked as ES module exports, so default imports of it keep working.
    Object.defineProperty(namespace, '__esModule', { value: true });
    const mod = new Module(filename);
    mod.filename = filename;
    mod.exports = namespace;
    mod.loaded = true;
    require.cache[filename] = mod;
  }
}

/**
 * The runtime modules that only a `require` call inside a function reaches (the OAuth endpoints, the BullMQ queue),
 * with the modules only they import. The compiled bundle leaves them out, to be required file by file when first
 * used: they load libraries a site without OAuth or Redis never needs (test/hygiene/lazy-modules.test.ts).
 */
async function lazyOnlyModules(modules: string[]): Promise<Set<string>> {
  const graph = await importGraph({
    entry: { stdin: { contents: entrySource(modules), resolveDir: PACKAGE_ROOT, loader: 'ts' } },
    owns: isBundled,
  });
  const closure = (roots: string[], follow: (lazy: boolean) => boolean): Set<string> => {
    const seen = new Set<string>();
    const todo = [...roots];
    for (let file = todo.pop(); file !== undefined; file = todo.pop()) {
      if (seen.has(file)) continue;
      seen.add(file);
      for (const edge of graph.get(file) ?? []) if (follow(edge.lazy)) todo.push(edge.file);
    }
    return seen;
  };
  const lazyRoots = [...graph.values()].flatMap((edges) => edges.filter((e) => e.lazy).map((e) => e.file));
  const lazy = closure(lazyRoots, () => true);
  const eagerRoots = modules.map((file) => path.join(PACKAGE_ROOT, file)).filter((file) => !lazy.has(file));
  const eager = closure(eagerRoots, (isLazy) => !isLazy);
  return new Set([...lazy].filter((file) => !eager.has(file)));
}

/**
 * Writes the compiled build's runtime bundle, `<out>/runtime.bundle.js` with its source map beside it (naming the .ts
 * files, without their text). What it leaves out (runtime/cli, the lazily required modules, generated/, controllers)
 * it requires by relative path as the compiled files of `<out>`, and packages by name, so dist/ can move.
 */
export async function buildCompiledRuntimeBundle(out: string): Promise<string> {
  const all = runtimeModules();
  const lazyOnly = await lazyOnlyModules(all);
  const bundle = path.join(out, COMPILED_BUNDLE);
  const built = await buildBundle(
    { dir: out, bundle },
    {
      entry: {
        stdin: {
          contents: entrySource(all.filter((file) => !lazyOnly.has(path.join(PACKAGE_ROOT, file)))),
          resolveDir: PACKAGE_ROOT,
          sourcefile: 'runtime-modules.ts',
          loader: 'ts',
        },
        keepNames: true,
        sourcemap: 'linked',
        sourcesContent: false,
        define: sandboxWorkerDefine(),
      },
      // Files are imported without extension.
      owns: (file) => isBundled(file) && !lazyOnly.has(file) && !lazyOnly.has(`${file}.ts`),
      codeCache: false,
      external: compiledExternal(out, out),
    },
  );
  if (!built) throw new Error('the runtime bundle could not be built (is esbuild installed?)');
  return built;
}

/**
 * In the compiled build: loads dist/runtime.bundle.js and registers its modules under their dist/ paths, before
 * anything requires the runtime. Without the bundle (or with SVC_BUNDLE=0) the runtime loads file by file.
 */
export function installCompiledRuntimeBundle(): void {
  if (process.env.SVC_BUNDLE === '0') return;
  const bundle = path.join(PACKAGE_ROOT, COMPILED_BUNDLE);
  if (!existsSync(bundle) || Object.keys(require.cache).some(isBundled)) return;
  register(bundle, '.js');
}
