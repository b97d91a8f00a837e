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
  /** Where the list of inputs goes, for isFresh; none for a bundle that is never rebuilt in place (dist/). */
  manifest?: string;
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
  if (!paths.manifest) return false;
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
  entry: Pick<
    BuildOptions,
    'entryPoints' | 'stdin' | 'keepNames' | 'sourcemap' | 'sourcesContent' | 'define'
  >;
  /** True for the files that go into the bundle; packages and every other file are required at run time by path. */
  owns: (file: string) => boolean;
  /** Make the V8 code cache beside the bundle (for bundles run through requireBundle). */
  codeCache: boolean;
  /**
   * How the bundle requires what it leaves outside: `file` is the absolute path of a file, undefined for a package
   * (`request` as imported). By default packages and files by absolute path, a file imported without extension as its
   * `.ts` (Node would pick a DocType's `.json` beside its controller).
   */
  external?: (request: string, file: string | undefined) => string;
  /**
   * The imports that may lead outside the owned files, as written (esbuild's onResolve filter, Go syntax): only these
   * are looked at here, the others esbuild resolves and bundles by itself. Default: every import. Each import looked
   * at here is a call from esbuild's process into this one: the registry bundle of the 766 fixture DocTypes made 6,300
   * of them, a third of its build time.
   */
  mayLeave?: RegExp;
}

function externalByAbsolutePath(request: string, file: string | undefined): string {
  if (file === undefined) return require.resolve(request, { paths: [PACKAGE_ROOT] });
  return !path.extname(file) && existsSync(`${file}.ts`) ? `${file}.ts` : file;
}

function loadEsbuild(): typeof import('esbuild') | undefined {
  try {
    return require('esbuild') as typeof import('esbuild');
  } catch {
    return undefined;
  }
}

/**
 * How a bundle written into a compiled build (`out`, dist/) requires what it leaves outside: a file as its compiled
 * `.js` in `out`, relative to the bundle's folder, and a package by name, so that dist/ can be moved.
 */
export function compiledExternal(out: string, bundleDir: string): NonNullable<BundleSpec['external']> {
  return (request, file) => {
    if (file === undefined) {
      // The package's own name (doctype-service/internal, mapped to the TypeScript sources) is one of its files.
      const resolved = require.resolve(request, { paths: [PACKAGE_ROOT] });
      if (
        !resolved.startsWith(PACKAGE_ROOT + path.sep) ||
        resolved.includes(`${path.sep}node_modules${path.sep}`)
      )
        return request;
      file = resolved;
    }
    const compiled = path.join(out, path.relative(PACKAGE_ROOT, file)).replace(/(\.ts)?$/, '.js');
    const rel = path.relative(bundleDir, compiled).split(path.sep).join('/');
    return rel.startsWith('.') ? rel : `./${rel}`;
  };
}

/** Runs esbuild on a bundle's entry, in memory: the owned files inside, everything else required at run time. */
function runEsbuild(
  esbuild: typeof import('esbuild'),
  outfile: string,
  { entry, owns, external = externalByAbsolutePath, mayLeave = /.*/ }: Omit<BundleSpec, 'codeCache'>,
) {
  // Each package and outside file is looked up once: thousands of generated modules import the same few packages, and
  // resolving a package through the TypeScript loader's hooks costs about 0.1 ms.
  const externals = new Map<string, string>();
  const externalPath = (request: string, file: string | undefined) => {
    const key = file ?? request;
    let found = externals.get(key);
    if (found === undefined) externals.set(key, (found = external(request, file)));
    return found;
  };
  return esbuild.build({
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
    outfile,
    plugins: [
      {
        name: 'owned-files-only',
        setup(build) {
          build.onResolve({ filter: mayLeave }, (args) => {
            if (args.kind === 'entry-point') return undefined;
            if (!args.path.startsWith('.'))
              return { external: true, path: externalPath(args.path, undefined) };
            const abs = path.resolve(args.resolveDir, args.path);
            if (owns(abs)) return undefined;
            return { external: true, path: externalPath(args.path, abs) };
          });
        },
      },
    ],
  });
}

/** An owned file's imports of other owned files (absolute paths), each marked lazy when it is a `require` call. */
export type ImportGraph = Map<string, { file: string; lazy: boolean }[]>;

/** What a bundle built from `spec` would hold, and how its files import one another; nothing is written. */
export async function importGraph(spec: Omit<BundleSpec, 'codeCache'>): Promise<ImportGraph> {
  const esbuild = loadEsbuild();
  if (!esbuild) throw new Error('esbuild is not installed');
  const { metafile } = await runEsbuild(esbuild, path.join(PACKAGE_ROOT, 'graph.js'), spec);
  const graph: ImportGraph = new Map();
  for (const [input, { imports }] of Object.entries(metafile.inputs)) {
    graph.set(
      path.resolve(PACKAGE_ROOT, input),
      imports
        .filter((edge) => !edge.external)
        .map((edge) => ({ file: path.resolve(PACKAGE_ROOT, edge.path), lazy: edge.kind === 'require-call' })),
    );
  }
  return graph;
}

/**
 * Builds a bundle. Returns its path, or undefined when it cannot be built here (no esbuild, read-only cache), in which
 * case the caller loads the TypeScript directly.
 */
export async function buildBundle(paths: BundlePaths, spec: BundleSpec): Promise<string | undefined> {
  const esbuild = loadEsbuild();
  if (!esbuild) return undefined;
  const result = await runEsbuild(esbuild, paths.bundle, spec);
  // With an external source map (sourcemap: 'linked'), the map is an output file of its own.
  const out = result.outputFiles?.find((file) => !file.path.endsWith('.map'));
  const map = result.outputFiles?.find((file) => file.path.endsWith('.map'));
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
    if (map) writeFileSync(`${paths.bundle}.map`, map.contents);
    if (spec.codeCache) prepareCodeCache(paths.bundle, bundleStamp, out.text);
    if (paths.manifest) {
      writeFileSync(`${paths.manifest}.${process.pid}.tmp`, JSON.stringify(inputs));
      renameSync(`${paths.manifest}.${process.pid}.tmp`, paths.manifest);
    }
  } catch {
    return undefined;
  }
  return paths.bundle;
}
