// The method table: every whitelisted function and document method of a registry, by dotted path, by
// `DocType/fn`, and by DocType and method name. Built once per registry; lookups are map reads.
import type { Document } from '../document/document';
import type { DocTypeBinding, MethodEntry, Registry } from '../registry/registry';
import type { MethodCall } from './method-call';
import { whitelistOf, type ResolvedWhitelist } from './whitelist';

/** A callable module function. */
export interface FunctionMethod {
  entry: MethodEntry;
  options: ResolvedWhitelist;
  fn: (args: Record<string, unknown>, call: MethodCall) => unknown;
}

/** A callable controller method (run on a document). */
export interface DocumentMethod {
  entry: MethodEntry;
  options: ResolvedWhitelist;
}

/** Every callable method of a registry. */
export interface MethodTable {
  /** By dotted path (`widgets.widget.widget.stock`). */
  byPath: ReadonlyMap<string, FunctionMethod>;
  /** By `DocType/fn` (v2's short path). */
  byShortPath: ReadonlyMap<string, FunctionMethod>;
  /** A whitelisted method of a DocType's controller class. */
  documentMethod(doctype: string, name: string): DocumentMethod | undefined;
}

const tables = new WeakMap<Registry, MethodTable>();

function addBinding(
  binding: DocTypeBinding,
  byPath: Map<string, FunctionMethod>,
  byShortPath: Map<string, FunctionMethod>,
  docs: Map<string, DocumentMethod>,
): void {
  const controller = binding.controller;
  if (!controller || !binding.methods) return;
  const Controller = controller.default as typeof Document | undefined;
  for (const entry of binding.methods) {
    if (entry.kind === 'function') {
      const fn = controller[entry.name];
      // Only what the runtime marks as whitelisted is callable, whatever the generator read.
      const options = whitelistOf(fn);
      if (!options) continue;
      const method = { entry, options, fn: fn as FunctionMethod['fn'] };
      byPath.set(entry.path, method);
      byShortPath.set(`${binding.meta.name}/${entry.name}`, method);
    } else {
      const options = whitelistOf(Controller?.prototype?.[entry.name]);
      if (options) docs.set(`${binding.meta.name}\u0000${entry.name}`, { entry, options });
    }
  }
}

/** The method table of `registry` (built on first use). */
export function methodTable(registry: Registry): MethodTable {
  let table = tables.get(registry);
  if (!table) {
    const byPath = new Map<string, FunctionMethod>();
    const byShortPath = new Map<string, FunctionMethod>();
    const docs = new Map<string, DocumentMethod>();
    for (const binding of registry.all()) addBinding(binding, byPath, byShortPath, docs);
    table = { byPath, byShortPath, documentMethod: (doctype, name) => docs.get(`${doctype}\u0000${name}`) };
    tables.set(registry, table);
  }
  return table;
}
