// Bulk deletes with a linked document among the items: that item fails with LinkExistsError (its message naming the
// linking document) and stays; the others are deleted, run now (under the threshold) or as a job (above it).
import type { TestSite } from '../helpers/test-site';
import { create, createBackLinksSite, exists } from './back-links-site';

let t: TestSite;
beforeAll(async () => {
  t = await createBackLinksSite({
    bulk_operation_async_threshold: { 'Audit Task': 3, '*': 3 },
    job_poll_ms: 50,
  });
});
afterAll(() => t.close());

let seq = 0;
const auth = () => ({ Authorization: t.adminToken });
const post = (path: string, body: object) => t.http.post(path).set(auth()).send(body);

/** Three free tasks and one that an Audit Hash links to (third of the four). */
async function tasks(prefix: string): Promise<{ names: string[]; linked: string; linker: string }> {
  const names: string[] = [];
  for (let i = 0; i < 4; i++) names.push(await create(t, 'Audit Task', { name: `${prefix}-${++seq}` }));
  const linked = names[2] as string;
  const linker = await create(t, 'Audit Hash', { name: `${prefix}-hash-${seq}`, task: linked });
  return { names, linked, linker };
}

/** The job's result once it has finished. */
async function jobResult(id: string): Promise<any> {
  const end = Date.now() + 30_000;
  for (;;) {
    const res = await t.http.get(`/api/v2/job/${id}`).set(auth());
    expect(res.status).toBe(200);
    if (res.body.data.status === 'finished') return res.body.data.result;
    if (res.body.data.status === 'failed' || Date.now() > end)
      throw new Error(`job ${id}: ${JSON.stringify(res.body.data)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Checks a bulk delete's result: every item deleted but the linked one, which failed with LinkExistsError. */
async function expectLinkedKept(
  result: any,
  { names, linked, linker }: { names: string[]; linked: string; linker: string },
  deleted: unknown[],
): Promise<void> {
  expect(result.deleted).toEqual(deleted);
  expect(result.failed).toEqual([
    {
      name: linked,
      doctype: 'Audit Task',
      error: 'LinkExistsError',
      message: `Cannot delete or cancel because Audit Task ${linked} is linked with Audit Hash ${linker}`,
    },
  ]);
  expect([result.success_count, result.failure_count]).toEqual([names.length - 1, 1]);
  for (const name of names)
    expect([name, await exists(t, 'Audit Task', name)]).toEqual([name, name === linked]);
}

test('bulk_delete of one DocType, run now: the linked item fails, the others are deleted', async () => {
  const items = await tasks('now');
  const three = items.names.slice(1);
  const res = await post('/api/v2/document/Audit Task/bulk_delete', { names: three });
  expect(res.status).toBe(200);
  await expectLinkedKept(
    res.body.data,
    { ...items, names: three },
    three.filter((n) => n !== items.linked),
  );
  expect(await exists(t, 'Audit Task', items.names[0] as string)).toBe(true);
});

test('bulk_delete of one DocType, as a job: the linked item fails, the others are deleted', async () => {
  const items = await tasks('job');
  const res = await post('/api/v2/document/Audit Task/bulk_delete', { names: items.names });
  expect(res.status).toBe(202);
  const result = await jobResult(res.body.data.job_id);
  await expectLinkedKept(
    result,
    items,
    items.names.filter((n) => n !== items.linked),
  );
});

test('bulk_delete across DocTypes: the linked item fails, the others are deleted', async () => {
  const items = await tasks('across');
  const three = items.names.slice(0, 3);
  const res = await post('/api/v2/method/bulk_delete', {
    docs: three.map((name) => ({ doctype: 'Audit Task', name })),
  });
  expect(res.status).toBe(200);
  await expectLinkedKept(
    res.body.data,
    { ...items, names: three },
    three.filter((n) => n !== items.linked).map((name) => ({ doctype: 'Audit Task', name })),
  );
});
