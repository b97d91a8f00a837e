// The runtime's layers, low to high, each a list of units in order (docs/architecture.md, "Layers", says why). A unit
// is a folder under runtime/ (its sub-folders included) or a file directly under runtime/ (`site.ts` is `site`). The
// whole list is one order: a unit may import only itself and the units before it, so an import never runs from a lower
// layer into a higher one, and no two units can import each other, directly or round a cycle.
import type { ImportEdge } from './import-graph';

/** One layer: its name and its units, lowest first. */
export interface Layer {
  name: string;
  units: readonly string[];
}

/** The layers, lowest first; within a layer, a unit may import the units listed before it, never those after it. */
export const LAYERS: readonly Layer[] = [
  { name: 'foundation', units: ['errors', 'meta', 'config', 'log', 'lifecycle'] },
  { name: 'storage', units: ['registry', 'db'] },
  { name: 'core', units: ['site', 'redis', 'document', 'query'] },
  { name: 'request', units: ['http'] },
  {
    name: 'features',
    units: [
      'auth',
      'permissions',
      'back-links',
      'operations',
      'jobs',
      'idempotency',
      'files',
      'data-export',
      'data-import',
      'oauth',
      'history',
      'methods',
      'scripts',
      'webhooks',
      'metrics',
      'events',
      'patches',
    ],
  },
  { name: 'http', units: ['middleware', 'routes'] },
  { name: 'composition', units: ['features', 'bootstrap', 'app', 'cli', 'internal', 'index'] },
];

/**
 * The runtime modules the generator may load, directly or through one another: field types and metadata shapes, the
 * error registry (the typed client's error classes), the route table, its row types and its file rows (route modules,
 * OpenAPI), the hook names (controllers' methods), and the registry bundle `npm run generate` refreshes (with the
 * bundle cache it is built on). Loading anything else would make generating load the runtime.
 */
export const GENERATOR_MAY_LOAD: readonly string[] = [
  'runtime/cli/bundle-code-cache.ts',
  'runtime/cli/cached-bundle.ts',
  'runtime/cli/registry-bundle.ts',
  'runtime/document/hooks.ts',
  'runtime/errors/errors.ts',
  'runtime/http/route-row.ts',
  'runtime/meta/field-types.ts',
  'runtime/meta/types.ts',
  'runtime/routes/file-routes.ts',
  'runtime/routes/route-table.ts',
];

/**
 * What is wrong with one import: `upward` into a higher layer; `sideways` into a unit of its own layer listed after
 * its own (the two could then import each other); `generator`: a module the generator loads (its own or one it reaches in runtime/) importing a
 * runtime module outside GENERATOR_MAY_LOAD.
 */
export type ViolationKind = 'upward' | 'sideways' | 'generator';

/** One import that breaks a rule. */
export interface Violation {
  kind: ViolationKind;
  from: string;
  to: string;
}

/** The runtime unit of a repository path (`runtime/document/x.ts` → `document`, `runtime/site.ts` → `site`), else undefined. */
export function unitOf(file: string): string | undefined {
  const parts = file.split('/');
  if (parts[0] !== 'runtime' || parts.length < 2) return undefined;
  return parts.length === 2 ? (parts[1] as string).replace(/\.ts$/, '') : parts[1];
}

/** Each unit's layer and its place in the whole order. Throws on a unit listed twice. */
export function unitPlaces(layers: readonly Layer[]): Map<string, { layer: number; rank: number }> {
  const places = new Map<string, { layer: number; rank: number }>();
  layers.forEach((layer, i) => {
    for (const unit of layer.units) {
      if (places.has(unit)) throw new Error(`runtime/${unit} is listed twice`);
      places.set(unit, { layer: i, rank: places.size });
    }
  });
  return places;
}

/** The runtime units the files belong to that no layer lists. */
export function unlistedUnits(files: readonly string[], layers: readonly Layer[]): string[] {
  const places = unitPlaces(layers);
  const units = files.map(unitOf).filter((unit): unit is string => unit !== undefined);
  return [...new Set(units)].filter((unit) => !places.has(unit)).sort();
}

/** The imports, from the generator or a runtime module it loads, of a runtime module outside `mayLoad`. */
function generatorViolations(edges: readonly ImportEdge[], mayLoad: readonly string[]): Violation[] {
  const importsOf = new Map<string, ImportEdge[]>();
  for (const edge of edges) importsOf.set(edge.from, [...(importsOf.get(edge.from) ?? []), edge]);
  const loaded = new Set([...importsOf.keys()].filter((file) => file.startsWith('generator/')));
  const pending = [...loaded];
  const found: Violation[] = [];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    for (const edge of importsOf.get(file) ?? []) {
      if (edge.to.startsWith('runtime/') && !mayLoad.includes(edge.to))
        found.push({ kind: 'generator', ...edge });
      else if (!loaded.has(edge.to)) {
        loaded.add(edge.to);
        pending.push(edge.to);
      }
    }
  }
  return found;
}

/**
 * The imports that break the order, sorted. Units no layer lists are left to `unlistedUnits`. With none left, the graph
 * between runtime units follows the list downward, so it has no cycle.
 */
export function findViolations(
  edges: readonly ImportEdge[],
  layers: readonly Layer[] = LAYERS,
  generatorMayLoad: readonly string[] = GENERATOR_MAY_LOAD,
): Violation[] {
  const places = unitPlaces(layers);
  const found: Violation[] = [];
  for (const edge of edges) {
    const from = places.get(unitOf(edge.from) ?? '');
    const to = places.get(unitOf(edge.to) ?? '');
    if (from === undefined || to === undefined || from.rank >= to.rank) continue;
    found.push({ kind: from.layer < to.layer ? 'upward' : 'sideways', ...edge });
  }
  found.push(...generatorViolations(edges, generatorMayLoad));
  return found.sort(
    (a, b) => a.kind.localeCompare(b.kind) || a.from.localeCompare(b.from) || a.to.localeCompare(b.to),
  );
}

/** A violation as one line of a failure's text: `kind from -> to`. */
export function violationText(violation: Violation): string {
  return `${violation.kind} ${violation.from} -> ${violation.to}`;
}
