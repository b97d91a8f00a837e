// Creates that fail inside a group-commit batch answer as they would alone, and the creates batched with them commit.
// On MariaDB the batch has no savepoints: a create that fails after its insert (or a batch INSERT that fails on a
// duplicate name) rolls the batch back and each create runs again alone. There the site's group commit has one lane and
// a held work keeps it busy until every request is queued, so all of them share one batch; on SQLite the same requests
// run in the turn's group commit. On PostgreSQL each create is a transaction of its own, run concurrently.
import type { Response } from 'supertest';
import { ADMINISTRATOR } from '../../runtime/site';
import type { MysqlDatabase } from '../../runtime/db/mysql/backend';
import type { MysqlGroupCommit } from '../../runtime/db/mysql/group-commit';
import { inWriteTransaction } from '../../runtime/db/write-transaction';
import { DocumentTransaction } from '../../runtime/document/lifecycle';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { DB_KIND, createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
let group: MysqlGroupCommit | undefined;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  if (DB_KIND === 'mysql') {
    group = (t.site.db as MysqlDatabase).groupCommit(1);
    expect(group.maxLanes).toBe(1);
  }
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });
const v1 = (body: object) => () => t.http.post('/api/resource/Widget').set(auth()).send(body);
const v2 = (body: object) => () => t.http.post('/api/v2/document/Widget').set(auth()).send(body);

async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 30_000) throw new Error('timed out waiting for the requests to queue');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Runs `work` (which starts the grouped writes) so that on MariaDB every write it starts joins one batch: a held grouped
 * work keeps the only lane busy until `count` writes are queued behind it.
 */
async function inOneBatch<T>(count: number, work: () => Promise<T>): Promise<T> {
  if (!group) return work();
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let holding = false;
  const held = inWriteTransaction(
    t.site.db,
    () => {
      holding = true;
      return gate;
    },
    undefined,
    true,
  );
  const done = work();
  await until(() => holding && group?.waiting === count);
  open();
  await held;
  return done;
}

/** Sends the requests together (in one batch on MariaDB). */
const together = (requests: (() => PromiseLike<Response>)[]) =>
  inOneBatch(requests.length, () => Promise.all(requests.map(async (send) => await send())));

const answerOf = (res: Response) => ({ status: res.status, body: res.body as unknown });
const storedWidgets = async (titles: string[]) =>
  (await t.site.db.knex('tabWidget').whereIn('title', titles).orderBy('title').pluck('title')) as string[];
const partsOf = async (name: string) =>
  (await t.site.db
    .knex('tabWidget Part')
    .where({ parent: name })
    .orderBy('idx')
    .pluck('part_name')) as string[];

test('hooks that refuse after the insert and before it, in one batch: each answers as alone, the creates beside them commit with their rows', async () => {
  const reruns = group?.reruns ?? 0;
  const parts = [{ part_name: 'p' }, { part_name: 'q' }];
  const bodies = ['batch ok 1', 'fail:after_insert', 'batch ok 2', 'fail:validate', 'batch ok 3'].map(
    (title) => ({ title, parts }),
  );
  const answers = await together(bodies.map(v1));
  expect(answers.map((res) => res.status)).toEqual([201, 400, 201, 400, 201]);
  expect(await storedWidgets(bodies.map((body) => body.title))).toEqual([
    'batch ok 1',
    'batch ok 2',
    'batch ok 3',
  ]);
  for (const i of [0, 2, 4]) expect(await partsOf(answers[i]!.body.data.name)).toEqual(['p', 'q']);
  // The refusal after the insert rolled its batch back: the creates of the batch ran again alone.
  if (group) expect(group.reruns).toBeGreaterThan(reruns);
  // The refused ones, sent again alone, answer the same.
  for (const i of [1, 3]) {
    expect(answers[i]!.body.exception).toContain(`${bodies[i]!.title.slice(5)} refused`);
    expect(answerOf(await v1(bodies[i]!)())).toEqual(answerOf(answers[i]!));
  }
});

test('duplicate names in one batch (a stored one, two new twins): 409 as alone, the other creates commit', async () => {
  expect((await v2({ name: 'dup-stored', title: 'stored' })()).status).toBe(201);
  const reruns = group?.reruns ?? 0;
  const bodies = [
    { name: 'dup-a', title: 'dup a', parts: [{ part_name: 'a' }] },
    { name: 'dup-stored', title: 'dup stored again' },
    { name: 'dup-twin', title: 'twin 1', parts: [{ part_name: 'one' }] },
    { name: 'dup-twin', title: 'twin 2', parts: [{ part_name: 'two' }] },
    { name: 'dup-b', title: 'dup b' },
  ];
  const answers = await together(bodies.map(v2));
  // PostgreSQL has no group commit: each create is a transaction of its own, run concurrently, so either twin may insert
  // first (the other waits on its row and then finds the name taken). Elsewhere the first twin wins.
  const twin = DB_KIND === 'postgres' && answers[2]!.status === 409 ? 3 : 2;
  const loser = twin === 2 ? 3 : 2;
  const statuses = [201, 409, 201, 201, 201];
  statuses[loser] = 409;
  expect(answers.map((res) => res.status)).toEqual(statuses);
  expect(
    (await t.site.db
      .knex('tabWidget')
      .where('name', 'like', 'dup-%')
      .orderBy('name')
      .select('name', 'title')) as unknown[],
  ).toEqual([
    { name: 'dup-a', title: 'dup a' },
    { name: 'dup-b', title: 'dup b' },
    { name: 'dup-stored', title: 'stored' },
    { name: 'dup-twin', title: bodies[twin]!.title },
  ]);
  expect(await partsOf('dup-twin')).toEqual(bodies[twin]!.parts!.map((p) => p.part_name));
  expect(await partsOf('dup-a')).toEqual(['a']);
  // The batch's INSERT failed on the duplicate: every create of it ran again alone.
  if (group) expect(group.reruns).toBeGreaterThan(reruns);
  for (const i of [1, loser]) expect(answerOf(await v2(bodies[i]!)())).toEqual(answerOf(answers[i]!));
});

test('a document saved outside a request transaction, in a batch that runs again: the second run starts from the document as given', async () => {
  const tx = new DocumentTransaction(t.site, {
    name: ADMINISTRATOR,
    roles: new Set(['Administrator', 'System Manager', 'All']),
  });
  const doc = tx.newDoc('Widget', { title: 'saved in a batch', parts: [{ part_name: 'kept' }] });
  const [saved, refused] = await inOneBatch(2, () =>
    Promise.all([doc.insert().then(() => 'saved'), v1({ title: 'fail:after_insert' })()]),
  );
  expect(saved).toBe('saved');
  expect(refused.status).toBe(400);
  expect(await storedWidgets(['saved in a batch'])).toEqual(['saved in a batch']);
  expect(await partsOf(String(doc.name))).toEqual(['kept']);
  expect(doc.hook_log).toBe('before_insert,before_naming,autoname,before_validate,validate,before_save');
});
