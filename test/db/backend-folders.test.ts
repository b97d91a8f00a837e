// Backend folders stay deletable: nothing outside runtime/db/<backend>/ imports a backend folder's modules but the scheme
// table (runtime/db/connect.ts), which imports each folder's backend.ts only, and no module outside them asks which
// database it runs on. (The rule is one line of the import-layer check: a backend folder is a leaf only the table reaches.)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const RUNTIME = path.join(__dirname, '..', '..', 'runtime');
const DB = path.join(RUNTIME, 'db');
const SCHEME_TABLE = path.join(DB, 'connect.ts');

/** Every .ts file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return sources(full);
    return full.endsWith('.ts') ? [full] : [];
  });
}

/** The backend folders: every folder under runtime/db. */
const BACKEND_FOLDERS = readdirSync(DB)
  .map((entry) => path.join(DB, entry))
  .filter((full) => statSync(full).isDirectory());

/** The relative module specifiers `file` imports (static, dynamic, require, and `export … from`). */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(
    /(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|^import\s+)['"](\.[^'"]+)['"]/gm,
  ))
    found.push(match[1] as string);
  return found;
}

/** The backend folder holding `file`, if any. */
const folderOf = (file: string) => BACKEND_FOLDERS.find((folder) => file.startsWith(folder + path.sep));

const rel = (file: string) => path.relative(RUNTIME, file);

test('there are backend folders, each with a backend.ts', () => {
  expect(BACKEND_FOLDERS.map((f) => path.basename(f)).sort()).toEqual(
    expect.arrayContaining(['mysql', 'sqlite']),
  );
  for (const folder of BACKEND_FOLDERS) expect(statSync(path.join(folder, 'backend.ts')).isFile()).toBe(true);
});

/** The imports of `files` that reach into a backend folder from outside it, other than the scheme table's. */
function violations(files: readonly { file: string; imports: readonly string[] }[]): string[] {
  const found: string[] = [];
  for (const { file, imports } of files) {
    const own = folderOf(file);
    for (const spec of imports) {
      const target = path.resolve(path.dirname(file), spec);
      const folder = folderOf(target);
      if (!folder || folder === own) continue;
      const allowed = file === SCHEME_TABLE && target === path.join(folder, 'backend');
      if (!allowed) found.push(`${rel(file)} imports ${spec}`);
    }
  }
  return found;
}

test("only the scheme table imports a backend folder, and only its backend.ts; folders never import each other's", () => {
  const files = sources(RUNTIME).map((file) => ({ file, imports: relativeImports(file) }));
  expect(files.some(({ file }) => file === SCHEME_TABLE)).toBe(true);
  expect(violations(files)).toEqual([]);
});

test('the rule refuses a core module, a sibling backend and the table reaching past backend.ts', () => {
  const sqlite = path.join(DB, 'sqlite');
  const mysql = path.join(DB, 'mysql');
  expect(
    violations([
      {
        file: path.join(RUNTIME, 'document', 'naming.ts'),
        imports: ['../db/sqlite/statements', '../db/row-store'],
      },
      {
        file: path.join(mysql, 'row-store.ts'),
        imports: ['../sqlite/statements', './statements', '../backend'],
      },
      { file: SCHEME_TABLE, imports: ['./sqlite/backend', './sqlite/row-store'] },
      { file: path.join(sqlite, 'backend.ts'), imports: ['./row-store', '../health'] },
    ]),
  ).toEqual([
    'document/naming.ts imports ../db/sqlite/statements',
    'db/mysql/row-store.ts imports ../sqlite/statements',
    'db/connect.ts imports ./sqlite/row-store',
  ]);
});

test('outside the backend folders no module asks which database it runs on', () => {
  const asks =
    /(?<!\.)\.dialect\b|\bkind\s*===?\s*'(?:sqlite|mysql|mariadb|postgres)'|===?\s*'(?:sqlite|mysql|mariadb)'|instanceof\s+(?:Sqlite|Mysql)\w*/;
  const found = sources(RUNTIME)
    .filter((file) => !folderOf(file))
    .flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => asks.test(line))
        .map((line) => `${rel(file)}: ${line.trim()}`),
    );
  expect(found).toEqual([]);
});
