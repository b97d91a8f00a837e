// Dependencies run one way: the runtime's imports follow the layer list (runtime-layers.ts, docs/architecture.md
// "Layers") downward, so no lower layer imports a higher one and no two folders import each other; the generator
// loads only its listed runtime modules. Type-only imports and lazy require() calls count like any import. There is no
// list of allowed exceptions: any import against the order fails.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { importSpecifiers, readImportGraph, sourceFiles } from './import-graph';
import { findViolations, LAYERS, unlistedUnits, violationText } from './runtime-layers';

const ROOT = path.join(__dirname, '..', '..');
const FILES = [...sourceFiles(ROOT, 'runtime'), ...sourceFiles(ROOT, 'generator')];

const EDGES = readImportGraph(ROOT, FILES);

/** The violations of the repository's files, with `planted` files added to (or replacing) them in memory. */
function violationsWith(planted: Record<string, string> = {}) {
  const plantedFiles = Object.keys(planted);
  const kept = EDGES.filter((edge) => !plantedFiles.includes(edge.from));
  return findViolations([...kept, ...readImportGraph(ROOT, plantedFiles, (file) => planted[file] as string)]);
}

test('every runtime folder and top-level file is in exactly one layer, and every listed one exists', () => {
  expect(unlistedUnits(FILES, LAYERS)).toEqual([]);
  const entries = readdirSync(path.join(ROOT, 'runtime'), { withFileTypes: true });
  const units = entries.map((entry) => (entry.isDirectory() ? entry.name : entry.name.replace(/\.ts$/, '')));
  expect(LAYERS.flatMap((layer) => layer.units).filter((unit) => !units.includes(unit))).toEqual([]);
});

test('no import breaks the layer order', () => {
  // A line here: an import against the order. Import from a lower layer instead, move the piece both need down, or
  // pass the dependency in from the composition root (features.ts, bootstrap.ts, app.ts).
  expect(violationsWith().map(violationText)).toEqual([]);
});

describe('a planted violation fails the check', () => {
  const foundWith = (planted: Record<string, string>) => violationsWith(planted).map(violationText);

  test('a lower layer importing a higher one (core document/ → http routes/)', () => {
    const planted = { 'runtime/document/planted.ts': "import { createRouter } from '../routes/router';\n" };
    expect(foundWith(planted)).toEqual(['upward runtime/document/planted.ts -> runtime/routes/router.ts']);
  });

  test('a type-only import, a re-export and a lazy require count too', () => {
    const planted = {
      'runtime/query/planted.ts': [
        "import type { JobQueue } from '../jobs/job-queue';",
        "export { createCsrf } from '../middleware/csrf';",
        "export const load = () => require('../oauth/oauth-model') as typeof import('../oauth/oauth-endpoints');",
      ].join('\n'),
    };
    expect(foundWith(planted)).toEqual([
      'upward runtime/query/planted.ts -> runtime/jobs/job-queue.ts',
      'upward runtime/query/planted.ts -> runtime/middleware/csrf.ts',
      'upward runtime/query/planted.ts -> runtime/oauth/oauth-endpoints.ts',
      'upward runtime/query/planted.ts -> runtime/oauth/oauth-model.ts',
    ]);
  });

  test('two folders of one layer importing each other (auth/ ↔ methods/)', () => {
    // methods/ already imports auth/; auth/ importing methods/ would close a cycle between the two.
    const planted = { 'runtime/auth/planted.ts': "import { BUILTIN_METHODS } from '../methods/builtins';\n" };
    expect(foundWith(planted)).toEqual(['sideways runtime/auth/planted.ts -> runtime/methods/builtins.ts']);
  });

  test('an import against the order inside a layer (registry/ is listed before db/)', () => {
    const planted = { 'runtime/registry/planted.ts': "import type { Database } from '../db/connect';\n" };
    expect(foundWith(planted)).toEqual(['sideways runtime/registry/planted.ts -> runtime/db/connect.ts']);
  });

  test('an import in the allowed direction passes', () => {
    const planted = {
      'runtime/routes/planted.ts':
        "import { ROUTE_TABLE } from './route-table';\nimport '../document/caller';\n",
    };
    expect(foundWith(planted)).toEqual([]);
  });

  test('the generator importing a runtime module outside its list', () => {
    const planted = { 'generator/emit/planted.ts': "import { openSite } from '../../runtime/bootstrap';\n" };
    expect(foundWith(planted)).toEqual(['generator generator/emit/planted.ts -> runtime/bootstrap.ts']);
  });

  test('a runtime module the generator loads importing more of the runtime', () => {
    const file = 'runtime/routes/route-table.ts';
    const planted = {
      [file]: `${readFileSync(path.join(ROOT, file), 'utf8')}\nimport type { Site } from '../site';\n`,
    };
    expect(foundWith(planted)).toEqual(['generator runtime/routes/route-table.ts -> runtime/site.ts']);
  });
});

test('every kind of module reference is read', () => {
  const text = [
    "import a from './a';",
    "import type { B } from './b';",
    "import './c';",
    "export { d } from './d';",
    "export * from './e';",
    "import f = require('./f');",
    "type G = typeof import('./g');",
    "const h = require('./h');",
    "const i = import('./i');",
    '// require("./not-code")',
  ].join('\n');
  expect(importSpecifiers('x.ts', text)).toEqual([
    './a',
    './b',
    './c',
    './d',
    './e',
    './f',
    './g',
    './h',
    './i',
  ]);
});

test('docs/architecture.md lists the same layers and folders, in the same order', () => {
  const doc = readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const rows = [...doc.matchAll(/^\d+\. \*\*(\w+)\*\*: (.+)$/gm)].map((m) => ({
    name: m[1] as string,
    units: [...(m[2] as string).matchAll(/`([\w-]+)(?:\/|\.ts)`/g)].map((u) => u[1] as string),
  }));
  expect(rows).toEqual(LAYERS.map((layer) => ({ name: layer.name, units: [...layer.units] })));
});
