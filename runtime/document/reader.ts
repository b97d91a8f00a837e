// Hot-path reads: on SQLite, cached prepared statements on the read connection; on MariaDB, knex.
import type { Statement } from 'better-sqlite3';
import { prepared, quoteIdent } from '../db/sqlite-statements';
import type { DocTypeBinding } from '../registry/registry';
import type { Site } from '../site';
import { tableFields } from './field-lists';
import { decodeRow, loadDoc, type DocData } from './store';

function statement(site: Site, sql: string): Statement {
  return prepared(site.db.reader as NonNullable<Site['db']['reader']>, sql);
}

/** Reads one committed document with its child rows, outside any transaction; undefined when it does not exist. */
export async function readDoc(site: Site, binding: DocTypeBinding, name: string): Promise<DocData | undefined> {
  const { meta } = binding;
  if (!site.db.reader || meta.issingle) return loadDoc(site.db.knex, binding, site.registry, name);
  const row = statement(site, `SELECT * FROM ${quoteIdent(meta.tableName)} WHERE name = ?`).get(name) as Record<string, unknown> | undefined;
  if (!row) return undefined;
  const data = decodeRow(meta, row);
  for (const { field, child } of tableFields(meta, site.registry)) {
    const rows = statement(
      site,
      `SELECT * FROM ${quoteIdent(child.meta.tableName)} WHERE parent = ? AND parenttype = ? AND parentfield = ? ORDER BY idx`,
    ).all(name, meta.name, field.fieldname) as Record<string, unknown>[];
    data[field.fieldname] = rows.map((r) => ({ ...decodeRow(child.meta, r), doctype: child.meta.name }));
  }
  return data;
}
