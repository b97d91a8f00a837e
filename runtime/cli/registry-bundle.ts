// The registry bundle: a generated registry compiled by esbuild into one JavaScript file, so that a service with hundreds
// of DocTypes starts without transpiling thousands of generated modules one by one. Rebuilt whenever any file it was
// built from changed; controllers and packages stay outside it (see cached-bundle.ts), and so do the validator modules,
// which the registry and the route modules require at a validator's first call (runtime/registry/lazy-validator.ts).
import path from 'node:path';
import { PACKAGE_ROOT, buildBundle, bundlePaths, compiledExternal, isFresh } from './cached-bundle';

/** Bumped when the way bundles are built changes, so bundles built the old way are not reused. */
const BUNDLE_FORMAT = 3;

/** The generated files a registry bundle holds: those of `genDir` but its validator modules. */
export function ownedBy(genDir: string): (file: string) => boolean {
  const validators = path.join(genDir, 'validators') + path.sep;
  return (file) => file.startsWith(genDir + path.sep) && !file.startsWith(validators);
}

/**
 * The imports of generated files that may lead outside ownedBy's files: packages, a path that climbs (controllers from
 * index.ts; also the route modules' imports of models, which stay inside), and the validator modules. The rest (`./`
 * imports of models, routes and methods) stay inside the generated folder.
 */
export const MAY_LEAVE = /^[^.]|^\.\.\/|(^|\/)validators\//;

/**
 * Builds the bundle of `<generatedDir>/index.ts` unless a fresh one exists; returns its path, or undefined when it
 * cannot be built here, in which case the caller loads the TypeScript directly.
 */
export async function ensureRegistryBundle(generatedDir: string): Promise<string | undefined> {
  const genDir = path.resolve(generatedDir);
  const paths = bundlePaths(`${BUNDLE_FORMAT}:${genDir}`);
  if (isFresh(paths)) return paths.bundle;
  return buildBundle(paths, {
    entry: { entryPoints: [path.join(genDir, 'index.ts')] },
    owns: ownedBy(genDir),
    mayLeave: MAY_LEAVE,
    codeCache: true,
  });
}

/** The compiled build's registry bundle, beside the compiled generated/index.js. */
export const COMPILED_REGISTRY_BUNDLE = 'index.bundle.js';

/**
 * Writes the registry bundle of `<generatedDir>/index.ts` into a compiled build (`out`, dist/), as
 * `<out>/<generatedDir>/index.bundle.js` with its source map beside it; what it leaves outside (the runtime,
 * controllers) it requires as the compiled files of `out`, the runtime's from the runtime bundle (runtime-bundle.ts).
 */
export async function buildCompiledRegistryBundle(generatedDir: string, out: string): Promise<string> {
  const genDir = path.resolve(generatedDir);
  const bundle = path.join(out, path.relative(PACKAGE_ROOT, genDir), COMPILED_REGISTRY_BUNDLE);
  const built = await buildBundle(
    { dir: path.dirname(bundle), bundle },
    {
      entry: {
        entryPoints: [path.join(genDir, 'index.ts')],
        sourcemap: 'linked',
        sourcesContent: false,
      },
      owns: ownedBy(genDir),
      mayLeave: MAY_LEAVE,
      codeCache: false,
      external: compiledExternal(out, path.dirname(bundle)),
    },
  );
  if (!built) throw new Error('the registry bundle could not be built (is esbuild installed?)');
  return built;
}
