// The registry bundle: a generated registry compiled by esbuild into one JavaScript file, so that a service with hundreds
// of DocTypes starts without transpiling thousands of generated modules one by one. Rebuilt whenever any file it was
// built from changed; controllers and packages stay outside it (see cached-bundle.ts).
import path from 'node:path';
import { buildBundle, bundlePaths, isFresh } from './cached-bundle';

/** Bumped when the way bundles are built changes, so bundles built the old way are not reused. */
const BUNDLE_FORMAT = 2;

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
    owns: (file) => file.startsWith(genDir + path.sep),
    codeCache: true,
  });
}
