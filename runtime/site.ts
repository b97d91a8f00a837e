// A site: the open database, the DocType registry and the configuration one service instance serves; and its plugin
// registry: each feature declares a SitePlugin (its state, made on a site's first use, and how to close it); the site
// keeps the states in numbered slots (one indexed load per access, read on hot paths) and closes them in reverse order
// of installation, as fastify runs its plugins' onClose hooks.
import type { ServiceConfig } from './config/config';
import type { Database } from './db/backend';
import type { RowStore } from './db/row-store';
import type { Registry } from './registry/registry';

/** Everything a request handler may reach besides the request itself. */
export interface Site {
  db: Database;
  registry: Registry;
  /** How documents reach the database: one implementation per backend, chosen when the site opens. */
  rows: RowStore;
  config: ServiceConfig;
  /** Each feature's per-site state and its teardown, run in reverse order when the site closes. */
  plugins: SitePlugins;
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

/** Closes something a site holds; a promise when it has to wait. */
export type Teardown = () => Promise<void> | void;

let nextSlot = 0;

/** What the registry needs of a plugin, whatever its state's type. */
export interface Slotted {
  readonly name: string;
  readonly slot: number;
  /** Closes a state this plugin made. */
  closeState(state: unknown, site: Site): Promise<void> | void;
}

/** A feature's per-site state: made for a site on first use, closed when the site closes. */
export class SitePlugin<T extends object> implements Slotted {
  /** This plugin's slot in every site's `plugins.slots`. */
  readonly slot = nextSlot++;

  /**
   * `create` makes the state of a site; `close` tears it down when the site closes (only for a site whose state was
   * made). Declare plugins at module level: each one takes a slot for the life of the process.
   */
  constructor(
    readonly name: string,
    readonly create: (site: Site) => T,
    readonly close?: (state: T, site: Site) => Promise<void> | void,
  ) {}

  /** The state of `site`, made now when this is its first use. */
  of(site: Site): T {
    const state = site.plugins.slots[this.slot];
    return state !== undefined ? (state as T) : site.plugins.open(this, site);
  }

  closeState(state: unknown, site: Site): Promise<void> | void {
    return this.close?.(state as T, site);
  }

  /** Sets the state of `site` in place of one made by `create` (another backend, a test's double). */
  set(site: Site, state: T): void {
    site.plugins.install(this);
    site.plugins.slots[this.slot] = state;
  }

  /** The state of `site` when it has been made; undefined otherwise (nothing is made). */
  peek(site: Site): T | undefined {
    return site.plugins.slots[this.slot] as T | undefined;
  }
}

interface Installed {
  name: string;
  /** The plugin, when the teardown is a plugin's (its state is closed only when made). */
  plugin?: Slotted;
  teardown?: Teardown;
}

/** A site's plugins (`site.plugins`): their states by slot, and the teardowns in installation order. */
export class SitePlugins {
  /** The states, indexed by SitePlugin.slot; undefined where not made yet. */
  readonly slots: unknown[] = [];
  private readonly installed: Installed[] = [];
  private readonly plugins = new Set<Slotted>();

  /**
   * Installs plugins in order: their teardowns run in reverse order (what is installed first closes last). A plugin
   * first used before it was installed is installed then; installing it again does nothing.
   */
  install(...plugins: Slotted[]): void {
    for (const plugin of plugins) {
      if (this.plugins.has(plugin)) continue;
      this.plugins.add(plugin);
      this.installed.push({ name: plugin.name, plugin });
    }
  }

  /** Adds a teardown that is not a plugin's state (the database, the job worker), in installation order. */
  onClose(name: string, teardown: Teardown): void {
    this.installed.push({ name, teardown });
  }

  /** Makes `plugin`'s state for the site (SitePlugin.of calls this on first use). */
  open<T extends object>(plugin: SitePlugin<T>, site: Site): T {
    this.install(plugin);
    const state = plugin.create(site);
    this.slots[plugin.slot] = state;
    return state;
  }

  /** Drops `plugin`'s state without closing it (the next use makes a new one). */
  forget(plugin: Slotted): void {
    this.slots[plugin.slot] = undefined;
  }

  /**
   * Runs every teardown in reverse order of installation, each awaited; one that throws does not stop the others, and
   * the first error is thrown once all have run. A state made afterwards (a late use) starts a new list.
   */
  async close(site: Site): Promise<void> {
    const errors: unknown[] = [];
    for (const { plugin, teardown } of this.installed.splice(0).reverse()) {
      try {
        if (teardown) await teardown();
        else if (plugin) {
          const state = this.slots[plugin.slot];
          this.slots[plugin.slot] = undefined;
          if (state !== undefined) await plugin.closeState(state, site);
        }
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length) throw errors[0];
  }
}
