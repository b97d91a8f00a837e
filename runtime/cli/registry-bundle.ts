// The start-up bundle: the generated registry compiled by esbuild into one JavaScript file, so that a service with
// hundreds of DocTypes starts without transpiling thousands of generated modules one by one. The bundle is a cache
// (node_modules/.cache/doctype-service), rebuilt whenever any file it was built from changed; controllers and packages
// stay outside it, so they are the same module instances the rest of the process sees.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileStamp, prepareCodeCache } from './bundle-code-cache';

const PACKAGE_ROOT = path.resolve(__dirname, '..', '..');
const CACHE_ROOT = path.join(PACKAGE_ROOT, 'node_modules', '.cache', 'doctype-service');

/** Bumped when the way bundles are built changes, so bundles built the old way are not reused. */
const BUNDLE_FORMAT = 2;

/** Where the bundle of one generated folder lives, and its manifest of inputs. */
function bundlePaths(generatedDir: string): { dir: string; bundle: string; manifest: string } {
  const abs = path.resolve(generatedDir);
  const dir = path.join(CACHE_ROOT, createHash('sha256').update(`${BUNDLE_FORMAT}:${abs}`).digest('hex').slice(0, 16));
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

/** True when every input the bundle was built from is unchanged. */
function isFresh(manifestFile: string): boolean {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
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

/**
 * Builds the bundle of `<generatedDir>/index.ts` unless a fresh one exists; returns its path, or undefined when it
 * cannot be built here (no esbuild, read-only cache), in which case the caller loads the TypeScript directly.
 */
export async function ensureRegistryBundle(generatedDir: string): Promise<string | undefined> {
  const { dir, bundle, manifest } = bundlePaths(generatedDir);
  if (isFresh(manifest)) return bundle;
  let esbuild: typeof import('esbuild');
  try {
    esbuild = require('esbuild') as typeof import('esbuild');
  } catch {
    return undefined;
  }
  const genDir = path.resolve(generatedDir);
  const result = await esbuild.build({
    entryPoints: [path.join(genDir, 'index.ts')],
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
    outfile: bundle,
    plugins: [
      {
        name: 'generated-only',
        setup(build) {
          // Only the generated folder goes into the bundle; packages and controllers are required from where they are.
          build.onResolve({ filter: /.*/ }, (args) => {
            if (args.kind === 'entry-point') return undefined;
            if (!args.path.startsWith('.')) return { external: true, path: require.resolve(args.path, { paths: [PACKAGE_ROOT] }) };
            const abs = path.resolve(args.resolveDir, args.path);
            if (abs.startsWith(genDir + path.sep)) return undefined;
            // A controller is imported without extension; Node would pick the DocType's `.json` beside it, so name the `.ts`.
            return { external: true, path: !path.extname(abs) && existsSync(`${abs}.ts`) ? `${abs}.ts` : abs };
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
    mkdirSync(dir, { recursive: true });
    // Written under a temporary name and renamed, so a concurrent start never reads half a file.
    const tmp = `${bundle}.${process.pid}.tmp`;
    writeFileSync(tmp, out.contents);
    const bundleStamp = fileStamp(tmp);
    renameSync(tmp, bundle);
    prepareCodeCache(bundle, bundleStamp, out.text);
    writeFileSync(`${manifest}.${process.pid}.tmp`, JSON.stringify(inputs));
    renameSync(`${manifest}.${process.pid}.tmp`, manifest);
  } catch {
    return undefined;
  }
  return bundle;
}
