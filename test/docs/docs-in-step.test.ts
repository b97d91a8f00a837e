// README.md and docs/ say what the code does: every site config key and environment variable the code reads is in the
// README's configuration tables and every key those tables list is read; every route-table path and built-in method is
// documented (docs/api.md lists them, and lists nothing else); every relative link resolves to a file and heading, and
// every source file they name exists.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { BUILTIN_METHODS } from '../../runtime/methods/builtins';
import { ROUTE_TABLE } from '../../runtime/routes/route-table';

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Every file under `dir` (relative to the repo) whose name ends with one of `extensions`. */
function filesUnder(dir: string, extensions: string[]): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((entry) => {
    const rel = `${dir}/${entry}`;
    if (statSync(path.join(ROOT, rel)).isDirectory()) return filesUnder(rel, extensions);
    return extensions.some((ext) => entry.endsWith(ext)) ? [rel] : [];
  });
}

const DOCS = ['README.md', ...filesUnder('docs', ['.md'])];
const README = read('README.md');
/** The documents without their fenced code blocks (examples may hold `[a](b)`-like text). */
const prose = (text: string) => text.replace(/^( *)```[\s\S]*?^\1```$/gm, '');

/** The rows' first cells (a code span) of the table under `heading` in `text`, up to the next heading. */
function tableKeys(text: string, heading: string): string[] {
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const rest = text.slice(start + heading.length + 2);
  const section = rest.slice(0, rest.search(/^#/m) === -1 ? undefined : rest.search(/^#/m));
  return [...section.matchAll(/^\| (.+?) +\|/gm)].flatMap(([, cell = '']) =>
    [...cell.matchAll(/`([^`]+)`/g)].map(([, key = '']) => key),
  );
}

/** The members of `interface SiteConfig` in runtime/config/config.ts. */
function siteConfigInterfaceKeys(): string[] {
  const file = 'runtime/config/config.ts';
  const source = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest);
  const decl = source.statements.find(
    (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'SiteConfig',
  );
  if (!decl) throw new Error(`${file} declares no SiteConfig`);
  return decl.members.map((m) => (m.name && ts.isIdentifier(m.name) ? m.name.text : '?'));
}

const RUNTIME_SOURCES = [...filesUnder('runtime', ['.ts']), ...filesUnder('bin', ['.ts', '.js'])];

/** Site config keys read anywhere in the runtime as `config.site.<key>`. */
function siteConfigKeysRead(): string[] {
  return RUNTIME_SOURCES.flatMap((file) =>
    [...read(file).matchAll(/\bconfig\??\.site\??\.([a-z_][a-z0-9_]*)/g)].map(([, key = '']) => key),
  );
}

/** Set by jest in its workers, read to silence the log there: not the service's configuration. */
const TEST_RUNNER_ENV = ['JEST_WORKER_ID'];

/** Environment variables the runtime and bin/ read, and those `npm start` sets for glibc. */
function envVarsRead(): string[] {
  const read_ = RUNTIME_SOURCES.flatMap((file) =>
    [...read(file).matchAll(/\benv\??\.([A-Z][A-Z0-9_]*)\b|\benv\[['"]([A-Z][A-Z0-9_]*)['"]\]/g)].map(
      ([, dotted, indexed]) => (dotted ?? indexed) as string,
    ),
  );
  return read_.filter((name) => !TEST_RUNNER_ENV.includes(name));
}

/** `npm start`'s own `NAME=${NAME:-…}` settings. */
function startScriptEnv(): string[] {
  const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
  return [...(pkg.scripts.start ?? '').matchAll(/\b([A-Z][A-Z0-9_]*)=\$\{/g)].map(([, name = '']) => name);
}

const uniqueSorted = (items: string[]) => [...new Set(items)].sort();

describe('configuration', () => {
  const documentedKeys = tableKeys(README, '### Site config');
  const documentedEnv = tableKeys(README, '### Environment variables');

  test('the code reads site config keys and environment variables (the scans find something)', () => {
    expect(siteConfigInterfaceKeys().length).toBeGreaterThan(30);
    expect(siteConfigKeysRead()).toContain('server_script_enabled');
    expect(envVarsRead()).toEqual(expect.arrayContaining(['PORT', 'DATABASE_URL', 'SVC_BUNDLE']));
  });

  test("every site config key the code declares or reads is in the README's site config table", () => {
    const code = uniqueSorted([...siteConfigInterfaceKeys(), ...siteConfigKeysRead()]);
    expect(code.filter((key) => !documentedKeys.includes(key))).toEqual([]);
  });

  test("every key of the README's site config table is one the code declares", () => {
    const code = siteConfigInterfaceKeys();
    expect(documentedKeys.filter((key) => !code.includes(key))).toEqual([]);
    expect(new Set(documentedKeys).size).toBe(documentedKeys.length);
  });

  test("every environment variable the code reads is in the README's table", () => {
    expect(uniqueSorted(envVarsRead()).filter((name) => !documentedEnv.includes(name))).toEqual([]);
  });

  test("every variable of the README's table is read by the code; npm start's settings are named in the README", () => {
    const code = envVarsRead();
    expect(documentedEnv.filter((name) => !code.includes(name))).toEqual([]);
    expect(startScriptEnv().filter((name) => !README.includes(`\`${name}\``))).toEqual([]);
  });
});

/** A path template with its captures blanked: `/api/resource/{doctype}/{name+}` and `{DocType}/{name}` agree. */
const templateOf = (p: string) => p.replace(/\{[^}]*\}/g, '{}');
/** Every code span of the documents that is a path (`/api/...`), templated. */
const documentedPaths = new Set(
  DOCS.flatMap((doc) =>
    [...prose(read(doc)).matchAll(/`(\/[^`\s]*)`/g)].map(([, p = '']) => templateOf(p.replace(/\?.*$/, ''))),
  ),
);
const allProse = DOCS.map((doc) => prose(read(doc))).join('\n');
const API = read('docs/api.md');

describe('routes and built-in methods', () => {
  test('every route-table path is documented; the /api/v1 aliases are said to exist', () => {
    const missing = ROUTE_TABLE.filter((row) => !row.alias && !documentedPaths.has(templateOf(row.path)));
    expect(missing.map((row) => row.path)).toEqual([]);
    if (ROUTE_TABLE.some((row) => row.alias)) expect(API).toContain('`/api/v1/...`');
  });

  test("every path of docs/api.md's route table is a route-table path", () => {
    const table = tableKeys(API, '## Routes');
    expect(table.length).toBeGreaterThan(20);
    const known = new Set(ROUTE_TABLE.map((row) => templateOf(row.path)));
    expect(table.filter((p) => !known.has(templateOf(p)))).toEqual([]);
  });

  test('every built-in method is documented as a code span', () => {
    expect([...BUILTIN_METHODS.keys()].filter((name) => !allProse.includes(`\`${name}\``))).toEqual([]);
  });

  test("every method of docs/api.md's built-in table is a built-in method", () => {
    const table = tableKeys(API, '## Built-in methods');
    expect(table.filter((name) => !BUILTIN_METHODS.has(name))).toEqual([]);
  });
});

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/** The anchors of a markdown file's headings (a repeated heading gets `-1`, `-2`, … as on GitHub). */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading = ''] of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

test('every relative link of README.md and docs/ names an existing file and heading', () => {
  const broken: string[] = [];
  for (const doc of DOCS) {
    for (const [, target = ''] of prose(read(doc)).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const [file = '', anchor] = target.split('#');
      const resolved = file ? path.normalize(path.join(path.dirname(doc), file)) : doc;
      let text: string;
      try {
        text = read(resolved);
      } catch {
        broken.push(`${doc}: ${target} (no such file)`);
        continue;
      }
      if (anchor && resolved.endsWith('.md') && !anchorsOf(text).has(anchor))
        broken.push(`${doc}: ${target} (no such heading)`);
    }
  }
  expect(broken).toEqual([]);
});

/** Rewritten on other branches (issue #30: layers, lifecycle); their file paths are checked once those land. */
const PATHS_CHECKED_ELSEWHERE = ['docs/architecture.md', 'docs/lifecycle.md'];

test('every source file README.md and docs/ name exists', () => {
  const missing: string[] = [];
  for (const doc of DOCS.filter((d) => !PATHS_CHECKED_ELSEWHERE.includes(d))) {
    for (const [, file = ''] of read(doc).matchAll(
      /`((?:runtime|generator|bench|test|bin)\/[\w./-]+\.(?:ts|js|json))`/g,
    ))
      if (!file.startsWith('bench/results/') && !existsSync(path.join(ROOT, file)))
        missing.push(`${doc}: ${file}`);
  }
  expect(missing).toEqual([]);
});
