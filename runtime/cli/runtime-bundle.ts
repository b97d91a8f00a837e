// The runtime bundle: every module of runtime/ (but the command line's own, runtime/cli) compiled by esbuild into one
// cached file, so that `svc` does not transpile and resolve ~90 TypeScript modules one by one through tsx at each start.
// Installing it puts each bundled module into Node's module cache under its own .ts path: whatever requires a runtime
// module afterwards (the command line, the registry bundle, controllers, auth hooks) gets that one instance.
import { readdirSync } from 'node:fs';
import Module from 'node:module';
import path from 'node:path';
import { PACKAGE_ROOT, buildBundle, bundlePaths, isFresh } from './cached-bundle';

/** Bumped when the way the runtime bundle is built changes. */
const BUNDLE_FORMAT = 3;
const RUNTIME = path.join(PACKAGE_ROOT, 'runtime');
const CLI = path.join(RUNTIME, 'cli');

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
        },
        owns: isBundled,
        codeCache: false,
      });
  if (!bundle) return;
  // Through require, unlike the registry bundle: Node then applies the source map; compiling ~200 KB is quick anyway.
  const { modules } = require(bundle) as { modules: Record<string, object> };
  for (const [file, namespace] of Object.entries(modules)) {
    const filename = path.join(PACKAGE_ROOT, file);
    // What a transpiled module exports is marked as ES module exports, so default imports of it keep working.
    Object.defineProperty(namespace, '__esModule', { value: true });
    const mod = new Module(filename);
    mod.filename = filename;
    mod.exports = namespace;
    mod.loaded = true;
    require.cache[filename] = mod;
  }
}
