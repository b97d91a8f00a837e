// A throw-away project root for patch tests: patches.txt and patch modules under test/tmp, and a site reopened on the
// same database with them (as `svc migrate` opens it).
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openSite } from '../../runtime/bootstrap';
import { readPatchList } from '../../runtime/patches/patch-list';
import type { Registry } from '../../runtime/registry/registry';
import type { Site } from '../../runtime/site';

/** A project root holding patches. */
export interface PatchProject {
  root: string;
  /** Writes patches.txt. */
  list(text: string): void;
  /** Writes the module of a dotted path (`patches.v1.x`) with `source` (TypeScript). */
  patch(dotted: string, source: string): void;
  /** Opens `site`'s database again with this project's patches (throws what openSite throws). */
  migrate(site: Site, registry: Registry): ReturnType<typeof openSite>;
  remove(): void;
}

/** A new project root under test/tmp. */
export function patchProject(): PatchProject {
  const root = path.resolve(__dirname, '../tmp', `patches_${process.pid}_${randomBytes(4).toString('hex')}`);
  mkdirSync(root, { recursive: true });
  return {
    root,
    list: (text) => writeFileSync(path.join(root, 'patches.txt'), text),
    patch: (dotted, source) => {
      const file = path.join(root, ...dotted.split('.')) + '.ts';
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, source);
    },
    migrate: (site, registry) => openSite(site.config, registry, { patches: readPatchList(root) }),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}
