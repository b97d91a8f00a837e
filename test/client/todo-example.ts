// The typed client's example (the README quotes it): create, read, change, list with typed fields and filters, count,
// page through, call a method, delete. Type-checked by `npm run typecheck` (the @ts-expect-error lines must fail to
// compile), run against a live server by test/client/typed-client.test.ts.
import { createClient, errors, tokenAuth, type types } from '../../generated/client';

/** What the example saw. */
export interface ExampleOutcome {
  created: types.ToDo;
  changed: types.ToDo;
  rows: { name: string; priority?: types.ToDo['priority'] }[];
  count: number;
  paged: string[];
  user: string;
  missing: string;
}

/** Runs the example against the service at `baseUrl` with an API key pair. */
export async function runExample(
  baseUrl: string,
  apiKey: string,
  apiSecret: string,
  fetch?: typeof globalThis.fetch,
): Promise<ExampleOutcome> {
  const api = createClient({ baseUrl, auth: tokenAuth(apiKey, apiSecret), fetch });

  const created = await api.insert('ToDo', { description: 'Try the typed client', priority: 'High' });
  const read = await api.get('ToDo', created.name);
  // Every key of an update is optional; `modified` refuses a stale write.
  const changed = await api.update('ToDo', read.name, { priority: 'Low', modified: read.modified });

  // The rows carry the fields asked for, typed; filters are checked against the fields and their values.
  const page = await api.list('ToDo', {
    fields: ['name', 'priority'],
    filters: [['priority', '=', 'Low']],
    orderBy: 'creation desc',
    limit: 50,
  });
  const rows = page.data.map((row) => ({ name: row.name, priority: row.priority }));
  // @ts-expect-error: status was not asked for, so the row has no status.
  void page.data[0]?.status;
  // @ts-expect-error: Urgent is not a priority.
  void api.list('ToDo', { filters: { priority: 'Urgent' } });

  const count = await api.count('ToDo', { filters: { priority: 'Low' } });
  const paged: string[] = [];
  for await (const row of api.iterate('ToDo', { filters: { priority: 'Low' }, limit: 2 }))
    paged.push(row.name);

  const user: string = await api.call('frappe.auth.get_logged_user', {});
  const counted: number = await api.call('frappe.client.get_count', { doctype: 'ToDo' });
  void counted;

  await api.delete('ToDo', created.name);
  let missing = '';
  try {
    await api.get('ToDo', created.name);
  } catch (err) {
    if (err instanceof errors.DoesNotExistError) missing = `${err.status} ${err.excType}`;
    else throw err;
  }
  return { created, changed, rows, count, paged, user, missing };
}
