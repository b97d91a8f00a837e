// The registry of the repo's DocTypes plus test/fixtures/doctypes, generated once per process into test/tmp/gen-<pid>-<random>.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runGenerator } from '../../generator/run-generator';
import type { Registry } from '../../runtime/registry/registry';

const ROOT = path.resolve(__dirname, '../..');
const TMP = path.join(ROOT, 'test/tmp');
/** The DocType folders of the fixture set, relative to the repo root. */
const SOURCES = ['doctypes', 'test/fixtures/doctypes'];
/** Folders whose files decide the generated output (a change regenerates). */
const INPUTS = [...SOURCES, 'generator'];

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .sort();
}

/** A digest of every input file (path, size and modification time). */
function inputsDigest(): string {
  const hash = createHash('sha1');
  for (const file of INPUTS.flatMap((d) => filesUnder(path.join(ROOT, d)))) {
    const stat = statSync(file);
    hash.update(`${path.relative(ROOT, file)}:${stat.size}:${stat.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Removes generated folders and markers of processes that no longer run. */
function sweepDeadProcesses(): void {
  if (!existsSync(TMP)) return;
  for (const entry of readdirSync(TMP)) {
    const m = /^gen-(\d+)(-[0-9a-f]+|\.json)$/.exec(entry);
    if (m && Number(m[1]) !== process.pid && !alive(Number(m[1])))
      rmSync(path.join(TMP, entry), { recursive: true, force: true });
  }
}

/**
 * The output folder for this process. Jest gives every test file fresh globals and modules, so the
 * per-process cache is a marker file `test/tmp/gen-<pid>.json` naming the folder and the inputs it was made from.
 */
export async function generatedFolder(): Promise<string> {
  if (process.cwd() !== ROOT)
    throw new Error(
      `run the tests from ${ROOT} (controller imports are resolved from the working directory)`,
    );
  const marker = path.join(TMP, `gen-${process.pid}.json`);
  const digest = inputsDigest();
  if (existsSync(marker)) {
    const cached = JSON.parse(readFileSync(marker, 'utf8')) as { dir: string; digest: string };
    if (cached.digest === digest && existsSync(path.join(cached.dir, 'index.ts'))) return cached.dir;
    rmSync(cached.dir, { recursive: true, force: true });
  }
  sweepDeadProcesses();
  const dir = path.join(TMP, `gen-${process.pid}-${randomBytes(4).toString('hex')}`);
  await runGenerator({ doctypes: SOURCES, out: dir, cwd: ROOT });
  writeFileSync(marker, JSON.stringify({ dir, digest }));
  return dir;
}

/** The registry of the core DocTypes plus the test fixtures (Widget, Widget Part, Gadget Order, Widget Settings, Named By *). */
export async function fixtureRegistry(): Promise<Registry> {
  const dir = await generatedFolder();
  // Loaded through jest's module registry so controllers share this test file's runtime modules.
  return (require(path.join(dir, 'index.ts')) as { registry: Registry }).registry;
}
