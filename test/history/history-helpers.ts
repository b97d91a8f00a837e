// Helpers for the history tests: Tracked Ledger documents (test/fixtures/doctypes/history) and the rows history writes.
import type { TestSite } from '../helpers/test-site';

/** A Version's diff as stored. */
export interface Diff {
  changed: [string, unknown, unknown][];
  added: [string, Record<string, unknown>][];
  removed: [string, Record<string, unknown>][];
  row_changed: [string, number, string, [string, unknown, unknown][]][];
}

/** The versions of a document, oldest first: who wrote them and the diff. */
export async function versionsOf(
  t: TestSite,
  docname: string,
  doctype = 'Tracked Ledger',
): Promise<{ owner: string; diff: Diff }[]> {
  const rows = (await t.site.db
    .knex('tabVersion')
    .where({ ref_doctype: doctype, docname })
    .orderBy([{ column: 'creation' }, { column: 'name' }])) as { owner: string; data: string }[];
  return rows.map((row) => ({ owner: row.owner, diff: JSON.parse(row.data) as Diff }));
}

/** The Deleted Documents of a document, oldest first, with the stored copy parsed. */
export async function deletedOf(
  t: TestSite,
  deletedName: string,
  doctype = 'Tracked Ledger',
): Promise<{ name: string; restored: number; new_name: string | null; owner: string; data: any }[]> {
  const rows = (await t.site.db
    .knex('tabDeleted Document')
    .where({ deleted_doctype: doctype, deleted_name: deletedName })
    .orderBy([{ column: 'creation' }, { column: 'name' }])) as {
    name: string;
    restored: number;
    new_name: string | null;
    owner: string;
    data: string;
  }[];
  return rows.map((row) => ({ ...row, restored: Number(row.restored), data: JSON.parse(row.data) }));
}

let counter = 0;

/** A fresh document name for this process. */
export function ledgerName(prefix = 'L'): string {
  return `${prefix}-${process.pid}-${++counter}`;
}

/** Creates a Tracked Ledger as Administrator (v2, under `name`) and returns it as stored. */
export async function createLedger(
  t: TestSite,
  fields: Record<string, unknown> = {},
): Promise<Record<string, any>> {
  const res = await t.http
    .post('/api/v2/document/Tracked Ledger')
    .set('Authorization', t.adminToken)
    .send({ name: ledgerName(), title: 'first', amount: 10, lines: [], ...fields });
  if (res.status !== 201) throw new Error(`create refused: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}
