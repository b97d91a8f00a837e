// At scale: every real Frappe and ERPNext v15 DocType generates as one set, type-checks under the repo's
// strict options, and migrates on a fresh SQLite file (a second migrate is a no-op). The slow test.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CHILD_FIELDS, STANDARD_FIELDS, valueFields } from '../../generator/normalize';
import { buildFiles, type GeneratorResult } from '../../generator/run-generator';
import { writeFileMap } from '../../generator/write/file-map';
import { connect } from '../../runtime/db/connect';
import { migrate } from '../../runtime/db/migrate';
import type { Registry } from '../../runtime/registry/registry';

const ROOT = path.resolve(__dirname, '../..');
const FIXTURES = path.resolve(__dirname, '../../../shared/fixtures');
const SETS = ['frappe-v15', 'erpnext-v15'].map((set) => path.join(FIXTURES, set));
/** Inside the repo, so generated imports of `doctype-service/internal` resolve through the package self-reference. */
const TMP_ROOT = path.join(ROOT, 'test/tmp');
const OUT = path.join(TMP_ROOT, `fixtures-gen-${process.pid}`);
/** 768 files, less the two DocTypes both sets define (validation warns, normalize keeps the first). */
const FILE_COUNT = 768;
const DUPLICATES = ['Print Heading', 'SMS Log'];
const TIMEOUT = 300_000;

const haveFixtures = SETS.every((set) => existsSync(set));
if (!haveFixtures) console.log(`skipping the fixture-scale test: ${FIXTURES} is absent`);

const elapsed = (since: number) => Math.round(performance.now() - since);

/** Removes output folders of earlier runs whose process is gone (a crashed run leaves ~3,000 files behind). */
function sweepDeadRuns(): void {
  if (!existsSync(TMP_ROOT)) return;
  for (const entry of readdirSync(TMP_ROOT)) {
    const pid = Number(/^fixtures-gen-(\d+)$/.exec(entry)?.[1]);
    if (!pid || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch {
      rmSync(path.join(TMP_ROOT, entry), { recursive: true, force: true });
    }
  }
}

/** Output and exit code of `tsc --noEmit -p <dir>`, run in a child process so it overlaps the migrate test. */
interface TypeCheck {
  code: number | null;
  output: string;
  ms: number;
}
let tscChild: ChildProcess | undefined;
function typeCheck(dir: string): Promise<TypeCheck> {
  const started = performance.now();
  const tsc = require.resolve('typescript/lib/tsc.js');
  const child = spawn(process.execPath, ['--max-old-space-size=8192', tsc, '--noEmit', '--pretty', 'false', '-p', dir], {
    cwd: ROOT,
  });
  tscChild = child;
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output, ms: elapsed(started) })));
}

(haveFixtures ? describe : describe.skip)('all real Frappe and ERPNext v15 DocTypes', () => {
  let built: Omit<GeneratorResult, 'written'>;
  let typeChecked: Promise<TypeCheck>;

  beforeAll(async () => {
    sweepDeadRuns();
    rmSync(OUT, { recursive: true, force: true });
    const started = performance.now();
    built = await buildFiles({ doctypes: SETS, out: path.relative(ROOT, OUT), cwd: ROOT });
    console.log(`buildFiles: ${built.doctypeCount} DocTypes, ${built.files.size} files in ${elapsed(started)} ms`);
    await writeFileMap(built.files, OUT);
    const tsconfig = { extends: '../../../tsconfig.json', include: ['.'], exclude: [] };
    writeFileSync(path.join(OUT, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
    typeChecked = typeCheck(OUT);
  }, TIMEOUT);

  afterAll(() => {
    if (tscChild && tscChild.exitCode === null) tscChild.kill();
    rmSync(OUT, { recursive: true, force: true });
  });

  test('one DocType per name: the duplicates across the two sets are warned about and generated once', () => {
    const duplicates = built.warnings.filter((w) => w.pointer === '/name' && w.message.includes('defined twice'));
    expect(duplicates.map((w) => /DocType "([^"]+)"/.exec(w.message)?.[1]).sort()).toEqual(DUPLICATES);
    expect(built.doctypeCount).toBe(FILE_COUNT - DUPLICATES.length);
    expect(built.files.size).toBe(4 * built.doctypeCount + 3);
  });

  test('migrate creates a table with a column per stored field for every stored DocType; a second run is a no-op', async () => {
    let started = performance.now();
    const { registry } = require(path.join(OUT, 'index.ts')) as { registry: Registry };
    const metas = registry.all().map((entry) => entry.meta);
    console.log(`importing the generated registry: ${elapsed(started)} ms`);
    expect(metas).toHaveLength(built.doctypeCount);
    const dropped = built.warnings.filter((w) => w.message.includes('defined twice')).map((w) => w.file);
    for (const meta of metas.filter((m) => DUPLICATES.includes(m.name)))
      expect(dropped.some((file) => file.endsWith(`/${meta.source}`))).toBe(false);

    const db = connect(`sqlite:${path.join(OUT, 'schema.sqlite')}`);
    try {
      started = performance.now();
      const first = await migrate(db, metas);
      console.log(`first migrate: ${first.changed.length} tables in ${elapsed(started)} ms`);
      const stored = metas.filter((m) => !m.issingle && !m.isVirtual);
      expect([...first.changed].sort()).toEqual(stored.map((m) => m.name).sort());

      const tables = new Set(
        (await db.knex('sqlite_master').where({ type: 'table' }).pluck('name')) as string[],
      );
      const wrong: Array<{ table: string; missing: string[]; extra: string[] }> = [];
      for (const meta of stored) {
        const want = [...STANDARD_FIELDS, ...(meta.istable ? CHILD_FIELDS : []), ...valueFields(meta).map((f) => f.fieldname)];
        const have = tables.has(meta.tableName) ? Object.keys(await db.knex(meta.tableName).columnInfo()) : [];
        const missing = want.filter((c) => !have.includes(c));
        const extra = have.filter((c) => !want.includes(c));
        if (missing.length || extra.length) wrong.push({ table: meta.tableName, missing, extra });
      }
      expect(wrong).toEqual([]);
      const tablesOfUnstored = metas.filter((m) => (m.issingle || m.isVirtual) && tables.has(m.tableName));
      expect(tablesOfUnstored.map((m) => m.name)).toEqual([]);

      started = performance.now();
      expect(await migrate(db, metas)).toEqual({ changed: [] });
      console.log(`second migrate: ${elapsed(started)} ms`);
    } finally {
      await db.close();
    }
  }, TIMEOUT);

  test('the generated folder type-checks with the repo compiler options (zero diagnostics)', async () => {
    const result = await typeChecked;
    console.log(`tsc --noEmit over ${built.files.size} generated files: ${result.ms} ms`);
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  }, TIMEOUT);
});
