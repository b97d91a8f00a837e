// At scale: every real Frappe and ERPNext v15 DocType generates as one set, type-checks under the repo's
// strict options, and migrates on a fresh SQLite file (a second migrate is a no-op). The slow test.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CHILD_FIELDS, STANDARD_FIELDS, valueFields } from '../../generator/normalize';
import { buildFiles, type GeneratorResult } from '../../generator/run-generator';
import { writeFileMap } from '../../generator/write/file-map';
import type { MigrateReport } from '../helpers/migrate-generated';

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

/** How a child process ended. */
interface Finished {
  code: number | null;
  output: string;
  ms: number;
}
const children: ChildProcess[] = [];
/** Runs a Node script in a child process (so type-check and migrate overlap); resolves when it exits. */
function runNode(args: string[]): Promise<Finished> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT });
  children.push(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code, output, ms: elapsed(started) })),
  );
}

(haveFixtures ? describe : describe.skip)('all real Frappe and ERPNext v15 DocTypes', () => {
  let built: Omit<GeneratorResult, 'written'>;
  let typeChecked: Promise<Finished>;
  let migrated: Promise<Finished>;
  const reportFile = path.join(OUT, 'migrate-report.json');

  beforeAll(async () => {
    sweepDeadRuns();
    rmSync(OUT, { recursive: true, force: true });
    const started = performance.now();
    built = await buildFiles({ doctypes: SETS, out: path.relative(ROOT, OUT), cwd: ROOT });
    console.log(
      `buildFiles: ${built.doctypeCount} DocTypes, ${built.files.size} files in ${elapsed(started)} ms`,
    );
    writeFileMap(built.files, OUT);
    const tsconfig = { extends: '../../../tsconfig.json', include: ['.'], exclude: [] };
    writeFileSync(path.join(OUT, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
    const tsc = require.resolve('typescript/lib/tsc.js');
    typeChecked = runNode(['--max-old-space-size=8192', tsc, '--noEmit', '--pretty', 'false', '-p', OUT]);
    const helper = path.join(ROOT, 'test/helpers/migrate-generated.ts');
    const sqlite = path.join(OUT, 'schema.sqlite');
    migrated = runNode([require.resolve('tsx/cli'), helper, path.join(OUT, 'index.ts'), sqlite, reportFile]);
  }, TIMEOUT);

  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill();
    rmSync(OUT, { recursive: true, force: true });
  });

  test('one DocType per name: the duplicates across the two sets are warned about and generated once', () => {
    const duplicates = built.warnings.filter(
      (w) => w.pointer === '/name' && w.message.includes('defined twice'),
    );
    expect(duplicates.map((w) => /DocType "([^"]+)"/.exec(w.message)?.[1]).sort()).toEqual(DUPLICATES);
    expect(built.doctypeCount).toBe(FILE_COUNT - DUPLICATES.length);
    // Per DocType: model, validator, v1 and v2 routes; then index.ts, two OpenAPI documents, the four client files, the
    // schema diagram and the DocType sources' hashes.
    expect(built.files.size).toBe(4 * built.doctypeCount + 9);
  });

  test(
    'migrate creates a table with a column per stored field for every stored DocType; a second run is a no-op',
    async () => {
      const run = await migrated;
      expect({ code: run.code, output: run.output }).toEqual({ code: 0, output: '' });
      const report = JSON.parse(readFileSync(reportFile, 'utf8')) as MigrateReport;
      console.log(
        `registry import ${report.ms.import} ms, first migrate ${report.first.length} tables in ${report.ms.first} ms, ` +
          `second ${report.ms.second} ms (child process: ${run.ms} ms)`,
      );
      const { metas } = report;
      expect(metas).toHaveLength(built.doctypeCount);
      const dropped = built.warnings.filter((w) => w.message.includes('defined twice')).map((w) => w.file);
      for (const meta of metas.filter((m) => DUPLICATES.includes(m.name)))
        expect(dropped.some((file) => file.endsWith(`/${meta.source}`))).toBe(false);

      const stored = metas.filter((m) => !m.issingle && !m.isVirtual);
      expect([...report.first].sort()).toEqual(stored.map((m) => m.name).sort());
      const wrong: Array<{ table: string; missing: string[]; extra: string[] }> = [];
      for (const meta of stored) {
        const want = [
          ...STANDARD_FIELDS,
          ...(meta.istable ? CHILD_FIELDS : []),
          ...valueFields(meta).map((f) => f.fieldname),
        ];
        const have = report.columns[meta.tableName] ?? [];
        const missing = want.filter((c) => !have.includes(c));
        const extra = have.filter((c) => !want.includes(c));
        if (missing.length || extra.length) wrong.push({ table: meta.tableName, missing, extra });
      }
      expect(wrong).toEqual([]);
      const unstoredWithTable = metas.filter(
        (m) => (m.issingle || m.isVirtual) && m.tableName in report.columns,
      );
      expect(unstoredWithTable.map((m) => m.name)).toEqual([]);
      expect(report.second).toEqual([]);
    },
    TIMEOUT,
  );

  test(
    'the generated folder type-checks with the repo compiler options (zero diagnostics)',
    async () => {
      const result = await typeChecked;
      console.log(`tsc --noEmit over ${built.files.size} generated files: ${result.ms} ms`);
      expect(result.output).toBe('');
      expect(result.code).toBe(0);
    },
    TIMEOUT,
  );
});
