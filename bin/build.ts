// `npm run build`: compiles the service to plain JavaScript in dist/ (runtime, generated registry, DocType controllers
// and hooks, generator, patches), one .js file per .ts file with the folders kept, so that `node dist/runtime/cli/main.js serve`
// (`npm start`) runs in one node process without tsx. esbuild only strips types (no bundling, no type check: that is
// `npm run typecheck`). The package's own name (`doctype-service`, `doctype-service/internal`, which package.json maps
// to the TypeScript sources) is rewritten to the compiled files; JSON files beside the sources (DocType JSON, OpenAPI
// documents, the generator's schema) are copied, and so is the TypeScript the generator copies into its output.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { transformSync } from 'esbuild';
import { buildCompiledRegistryBundle } from '../runtime/cli/registry-bundle';
import { buildCompiledRuntimeBundle } from '../runtime/cli/runtime-bundle';
import { bundleSandboxWorker } from '../runtime/scripts/worker-bundle';

const ROOT = path.resolve(__dirname, '..');
/** The folders compiled (patches/ when the project has one); tests, benchmarks and this script stay TypeScript. */
const SOURCES = ['runtime', 'generated', 'doctypes', 'generator', 'patches'].filter((dir) =>
  existsSync(path.join(ROOT, dir)),
);
/**
 * TypeScript files the compiled code reads as text, copied beside their compiled .js: the generator writes the typed
 * client's runtime (generator/client/client-runtime.ts) into generated/client/ as it is.
 */
const TEXT_SOURCES = ['generator/client/client-runtime.ts'];
/** The package's own import names and the module each is compiled to. */
const SELF: Record<string, string> = {
  'doctype-service': 'runtime/index.js',
  'doctype-service/internal': 'runtime/internal.js',
};

/** Every file under `dir`, relative to the package root. */
function filesUnder(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(rel) : [rel];
  });
}

/** Rewrites requires of the package's own name to the compiled file, relative to `file`. */
function selfImports(code: string, file: string): string {
  return code.replace(/require\("(doctype-service(?:\/internal)?)"\)/g, (whole, name: string) => {
    const target = SELF[name];
    if (!target) return whole;
    let rel = path.relative(path.dirname(file), target).split(path.sep).join('/');
    if (!rel.startsWith('.')) rel = `./${rel}`;
    return `require(${JSON.stringify(rel)})`;
  });
}

/**
 * Compiles one TypeScript file to CommonJS under `out` (`define`: identifiers replaced by the build), with its source map beside it (`<file>.js.map`, named by a
 * `sourceMappingURL` comment). The map holds the mappings and the path of the .ts file, not its text: node reads it
 * only with --enable-source-maps, and V8 keeps each module's source string for the life of the process, so an inline
 * map (base64, with the TypeScript source inside) tripled what every loaded module holds (4.4 MB of source strings
 * instead of 1.5 MB) and --enable-source-maps parsed all of it at load.
 */
function compile(file: string, out: string, define: Record<string, string>): void {
  const source = readFileSync(path.join(ROOT, file), 'utf8');
  const target = path.join(out, file.replace(/\.ts$/, '.js'));
  const { code, map } = transformSync(source, {
    loader: 'ts',
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    // Stack traces name the .ts file (relative to the map: the source tree beside dist/) and its lines.
    sourcefile: path.relative(path.dirname(target), path.join(ROOT, file)).split(path.sep).join('/'),
    sourcemap: 'external',
    sourcesContent: false,
    // Class and function names stay (error classes are matched by name in places).
    keepNames: true,
    define,
  });
  mkdirSync(path.dirname(target), { recursive: true });
  const mapName = `${path.basename(target)}.map`;
  writeFileSync(
    target,
    `${selfImports(code, file.replace(/\.ts$/, '.js'))}//# sourceMappingURL=${mapName}\n`,
  );
  writeFileSync(`${target}.map`, map);
}

/**
 * Builds `out` (default dist/) from scratch; returns the number of files compiled and copied. Besides the files, the
 * runtime as one bundle (runtime.bundle.js, see runtime-bundle.ts) and the generated registry as another
 * (generated/index.bundle.js), as the tsx start loads them: the CLI installs the runtime's modules under their dist/
 * paths, and the registry bundle requires them by those paths. Modules compiled one by one export through getters (esbuild's `__export`), so every
 * call into another module went through one; in the bundle, calls between runtime modules are direct.
 */
export async function build(out = path.join(ROOT, 'dist')): Promise<{ compiled: number; copied: number }> {
  rmSync(out, { recursive: true, force: true });
  let compiled = 0;
  let copied = 0;
  // The sandbox worker's program, bundled once and put into the code (runtime/scripts/worker-bundle.ts).
  const define = { __SANDBOX_WORKER__: JSON.stringify(bundleSandboxWorker()) };
  for (const file of SOURCES.flatMap((dir) => filesUnder(dir))) {
    if (file.endsWith('.d.ts')) continue;
    if (file.endsWith('.ts')) {
      compile(file, out, define);
      compiled++;
    } else if (file.endsWith('.json')) {
      mkdirSync(path.dirname(path.join(out, file)), { recursive: true });
      copyFileSync(path.join(ROOT, file), path.join(out, file));
      copied++;
    }
  }
  for (const file of TEXT_SOURCES) {
    copyFileSync(path.join(ROOT, file), path.join(out, file));
    copied++;
  }
  // The compiled tree is CommonJS whatever an enclosing package.json says.
  writeFileSync(path.join(out, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
  await buildCompiledRuntimeBundle(out);
  await buildCompiledRegistryBundle(path.join(ROOT, 'generated'), out);
  return { compiled, copied };
}

if (require.main === module) {
  const started = Date.now();
  build().then(
    ({ compiled, copied }) =>
      console.log(
        `dist/: ${compiled} files compiled, ${copied} copied, the runtime bundled in ${Date.now() - started} ms`,
      ),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
