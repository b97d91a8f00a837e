// No code reads a library's internals: no underscore-prefixed member (knex's `_query`, a compiler's `_groupOrder`),
// looked up by name or not, and no file of a package beyond its public entry points (`pkg/lib/...`). Libraries are
// extended through what they export and type: knex's `client` option and Knex.Client's methods, a grant's base class.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Every TypeScript file under a folder. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Underscore names that are the service's own: Frappe's `_server_messages` response field. */
const OWN = /\._server_messages\b/g;

const READS: [string, RegExp][] = [
  ['an underscore member', /[\w$)\]]\._[A-Za-z]\w*/],
  ['an underscore member by name', /(?:Reflect\.get|\[)\s*\(?[^'"\]]*['"]_[A-Za-z]\w*['"]/],
  [
    "a package's internal file",
    /(?:from\s+|require\(\s*)['"](?!ajv\/dist\/standalone['"])(?:@[\w.-]+\/)?[\w.-]+\/(?:lib|dist|src|build|internal)\//,
  ],
];

/** What a line reads of a library's internals, with its comment and the service's own names left out. */
function readsOf(line: string): string[] {
  const code = line.replace(/^\s*(?:\/\/|\*|\/\*).*$/, '').replace(OWN, '');
  return READS.filter(([, pattern]) => pattern.test(code)).map(([what]) => what);
}

test("runtime and generator code reads no library's internals", () => {
  const found: string[] = [];
  for (const file of [...sourceFiles(join(ROOT, 'runtime')), ...sourceFiles(join(ROOT, 'generator'))]) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const what of readsOf(line)) found.push(`${file}:${i + 1}: ${what}: ${line.trim()}`);
      });
  }
  expect(found).toEqual([]);
});

test("the check finds each kind of read, and not a comment or the service's own names", () => {
  const reads = [
    '  const query = client._query.bind(client);',
    '      return super._groupOrder(item, type);',
    "  const baseQuery = Reflect.get(Base.prototype, '_query') as KnexQuery;",
    "  require('@node-oauth/oauth2-server/lib/grant-types/authorization-code-grant-type') as GrantClass;",
    "import Dialect from 'knex/lib/dialects/better-sqlite3';",
  ];
  for (const line of reads) expect([line, readsOf(line).length > 0]).toEqual([line, true]);
  for (const line of [
    "// knex's `_query` is private",
    '    else body._server_messages = JSON.stringify(all);',
    "import standaloneCode from 'ajv/dist/standalone';",
    "const { types } = require('pg');",
    'const my_name = a_b.c;',
  ])
    expect([line, readsOf(line)]).toEqual([line, []]);
});
