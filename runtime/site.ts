// A site: the open database, the DocType registry and the configuration one service instance serves.
import type { ServiceConfig } from './config/config';
import type { Database } from './db/backend';
import type { RowStore } from './db/row-store';
import type { LifecycleExtensions } from './document/extension-points';
import type { JobQueue } from './jobs/job-queue';
import type { Registry } from './registry/registry';
import type { SitePlugins } from './site-plugins';

/** Everything a request handler may reach besides the request itself. */
export interface Site {
  db: Database;
  registry: Registry;
  /** How documents reach the database: one implementation per backend, chosen when the site opens. */
  rows: RowStore;
  config: ServiceConfig;
  /** The document lifecycle's extension points and what the features registered into them (runtime/features.ts). */
  lifecycle: LifecycleExtensions;
  /** Each feature's per-site state and its teardown, run in reverse order when the site closes (site-plugins.ts). */
  plugins: SitePlugins;
  /** The site's background job queue (runtime/jobs); absent only on sites built by hand. */
  jobs?: JobQueue;
}

/** The user a request runs as. */
export interface SessionUser {
  name: string;
  roles: ReadonlySet<string>;
}

/** The Guest user (no credentials). */
export const GUEST: SessionUser = { name: 'Guest', roles: new Set(['Guest']) };

/** The Administrator user. */
export const ADMINISTRATOR = 'Administrator';
