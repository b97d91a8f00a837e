// The start-up bundles' cache (node_modules/.cache/doctype-service): esbuild output kept beside a manifest of the files
// it was built from, reused while every one of them is unchanged. Packages and files a bundle does not own stay outside
// it and are required from where they are, so they are the same module instances the rest of the process sees.
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import type { BuildOptions } from 'esbuild';
import { fileStamp, prepareCodeCache } from './bundle-code-cache';

/** The package's folder, as a real path: Node keys the modules it loaded by real path. */
export const PACKAGE_ROOT = realpathSync(path.resolve(__dirname, '..', '..'));
const CACHE_ROOT = path.join(PACKAGE_ROOT, 'node_modules', '.cache', 'doctype-service');

/** A bundle file and its manifest of inputs. */
export interface BundlePaths {
  dir: string;
  bundle: string;
  manifest: string;
}

/** Where the bundle named by `key` lives. */
export function bundlePaths(key: string): BundlePaths {
  const dir = path.join(CACHE_ROOT, createHash('sha256').update(key).digest('hex').slice(0, 16));
  return { dir, bundle: path.join(dir, 'index.js'), manifest: path.join(dir, 'manifest.json') };
}

type Manifest = Record<string, [size: number, mtimeMs: number]>;

function stamp(file: string): [number, number] | undefined {
  try {
    const s = statSync(file);
    return [s.size, s.mtimeMs];
  } catch {
    return undefined;
  }
}

/** True when the bundle exists and every input it was built from is unchanged. */
export function isFresh(paths: BundlePaths): boolean {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(paths.manifest, 'utf8')) as Manifest;
  } catch {
    return false;
  }
  const files = Object.entries(manifest);
  if (files.length === 0) return false;
  for (const [file, [size, mtime]] of files) {
    const now = stamp(file);
    if (!now || now[0] !== size || now[1] !== mtime) return false;
  }
  return true;
}

/** What a bundle is built from, and how. */
export interface BundleSpec {
  /** The entry and the esbuild options that differ between bundles. */
  entry: Pick<BuildOptions, 'entryPoints' | 'stdin' | 'keepNames' | 'sourcemap'>;
  /** True for the files that go into the bundle; packages and every other file are required at run time by path. */
  owns: (file: string) => boolean;
  /** Make the V8 code cache beside the bundle (for bundles run through requireBundle). */
  codeCache: boolean;
}

/**
 * Builds a bundle. Returns its path, or undefined when it cannot be built here (no esbuild, read-only cache), in which
 * case the caller loads the TypeScript directly.
 */
export async function buildBundle(
  paths: BundlePaths,
  { entry, owns, codeCache }: BundleSpec,
): Promise<string | undefined> {
  let esbuild: typeof import('esbuild');
  try {
    esbuild = require('esbuild') as typeof import('esbuild');
  } catch {
    return undefined;
  }
  const result = await esbuild.build({
    ...entry,
    absWorkingDir: PACKAGE_ROOT,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    write: false,
    metafile: true,
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'silent',
    outfile: paths.bundle,
    plugins: [
      {
        name: 'owned-files-only',
        setup(build) {
          build.onResolve({ filter: /.*/ }, (args) => {
            if (args.kind === 'entry-point') return undefined;
            if (!args.path.startsWith('.'))
              return { external: true, path: require.resolve(args.path, { paths: [PACKAGE_ROOT] }) };
            const abs = path.resolve(args.resolveDir, args.path);
            if (owns(abs)) return undefined;
            // Imported without extension: Node would pick a DocType's `.json` beside its controller, so name the `.ts`.
            return {
              external: true,
              path: !path.extname(abs) && existsSync(`${abs}.ts`) ? `${abs}.ts` : abs,
            };
          });
        },
      },
    ],
  });
  const out = result.outputFiles?.[0];
  if (!out) return undefined;
  const inputs: Manifest = {};
  for (const input of Object.keys(result.metafile?.inputs ?? {})) {
    const file = path.resolve(PACKAGE_ROOT, input);
    const s = stamp(file);
    if (s) inputs[file] = s;
  }
  try {
    mkdirSync(paths.dir, { recursive: true });
    // Written under a temporary name and renamed, so a concurrent start never reads half a file.
    const tmp = `${paths.bundle}.${process.pid}.tmp`;
    writeFileSync(tmp, out.contents);
    const bundleStamp = fileStamp(tmp);
    renameSync(tmp, paths.bundle);
    if (codeCache) prepareCodeCache(paths.bundle, bundleStamp, out.text);
    writeFileSync(`${paths.manifest}.${process.pid}.tmp`, JSON.stringify(inputs));
    renameSync(`${paths.manifest}.${process.pid}.tmp`, paths.manifest);
  } catch {
    return undefined;
  }
  return paths.bundle;
}
