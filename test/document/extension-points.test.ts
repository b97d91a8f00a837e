// The lifecycle's extension points: a closed list (an unknown name is refused), handlers for one DocType or for all in
// registration order, the points reached in the documented order, a throwing handler rolling the operation back, and
// afterCommit handlers that run only after a commit.
import { readFileSync } from 'node:fs';
import { ValidationError } from '../../runtime/errors/errors';
import {
  EXTENSION_POINTS,
  LifecycleExtensions,
  lifecycleOf,
  type ExtensionPoint,
} from '../../runtime/document/extension-points';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
/** What the recording handlers saw, for the Widget titled `watched` only. */
let log: string[] = [];
/** The point whose recording handler throws (a ValidationError), if any. */
let failAt: ExtensionPoint | undefined;
const WATCHED = 'watched by the extension test';

const auth = () => ({ Authorization: t.adminToken });
const title = (op: { doc: Record<string, unknown> }) => op.doc.title;

beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  const ext = lifecycleOf(t.site);
  for (const point of EXTENSION_POINTS) {
    if (point === 'docEvent')
      ext.on(
        'docEvent',
        (op, hook) => {
          if (title(op) === WATCHED) log.push(`docEvent:${hook}`);
        },
        'Widget',
      );
    else if (point === 'afterTransaction')
      ext.on(
        'afterTransaction',
        (_tx, written) => {
          if (written.has('Widget') && log.length) log.push(point);
        },
        'Widget',
      );
    else
      ext.on(
        point as 'beforeSave',
        (op) => {
          if (title(op) !== WATCHED) return;
          log.push(point);
          if (failAt === point) throw new ValidationError(`${point} refused`);
        },
        'Widget',
      );
  }
});
afterAll(() => t.close());
beforeEach(() => {
  log = [];
  failAt = undefined;
});

const create = () => t.http.post('/api/resource/Widget').set(auth()).send({ title: WATCHED, qty: 1 });
const stored = (name: string) => t.site.db.knex('tabWidget').where({ name }).first('name', 'qty');

describe('a closed list', () => {
  test('registering an unknown point throws, naming it and the known ones; nothing is registered', () => {
    const ext = new LifecycleExtensions();
    const before = ext.of('Widget');
    expect(() => ext.on('beforeSaev' as ExtensionPoint, () => undefined)).toThrow(
      /Unknown lifecycle extension point: beforeSaev \(one of authorizeSave, beforeSave/,
    );
    expect(() => ext.on('on_update' as ExtensionPoint, () => undefined, 'Widget')).toThrow(TypeError);
    expect(ext.of('Widget')).toEqual(before);
    for (const point of EXTENSION_POINTS) expect(ext.of('Widget')[point]).toEqual([]);
  });

  test('a handler that is not a function is refused', () => {
    const ext = new LifecycleExtensions();
    expect(() => ext.on('beforeSave', 'checkFile' as unknown as () => void)).toThrow(/must be a function/);
  });

  test('the points are unique', () => {
    expect(new Set(EXTENSION_POINTS).size).toBe(EXTENSION_POINTS.length);
  });

  test('docs/lifecycle.md lists every point, in order', () => {
    const doc = readFileSync('docs/lifecycle.md', 'utf8');
    const section = doc.slice(doc.indexOf('## Extension points'));
    const listed = [...section.matchAll(/^\| `(\w+)` +\|/gm)].map((m) => m[1]);
    expect(listed).toEqual([...EXTENSION_POINTS]);
  });
});

describe('registration', () => {
  test('handlers of a point run in registration order: those for the DocType and those for all, interleaved', () => {
    const ext = new LifecycleExtensions();
    const calls: string[] = [];
    ext.on('beforeSave', () => void calls.push('widget 1'), 'Widget');
    ext.on('beforeSave', () => void calls.push('all'));
    ext.on('beforeSave', () => void calls.push('widget 2'), 'Widget');
    ext.on('beforeSave', () => void calls.push('gadget'), 'Gadget Order');
    for (const handler of ext.of('Widget').beforeSave) void handler({} as never);
    expect(calls).toEqual(['widget 1', 'all', 'widget 2']);
    calls.length = 0;
    for (const handler of ext.of('Gadget Order').beforeSave) void handler({} as never);
    expect(calls).toEqual(['all', 'gadget']);
  });

  test('a registration after a lookup is seen by the next lookup', () => {
    const ext = new LifecycleExtensions();
    expect(ext.of('Widget').afterWrite).toHaveLength(0);
    ext.on('afterWrite', () => undefined);
    expect(ext.of('Widget').afterWrite).toHaveLength(1);
  });

  test('an afterTransaction handler registered for several DocTypes runs once per transaction', () => {
    const ext = new LifecycleExtensions();
    const shared = () => undefined;
    ext.on('afterTransaction', shared, 'User');
    ext.on('afterTransaction', shared, 'Has Role');
    const own = () => undefined;
    ext.on('afterTransaction', own, 'ToDo');
    expect(ext.afterTransaction(new Set(['User', 'Has Role']))).toEqual([shared]);
    expect(ext.afterTransaction(new Set(['ToDo', 'Has Role']))).toEqual([shared, own]);
    expect(ext.afterTransaction(new Set(['Widget']))).toEqual([]);
  });

  test('a handler for one DocType never runs for another; one for all runs for each', async () => {
    const seen: string[] = [];
    lifecycleOf(t.site).on(
      'beforeWrite',
      (op) => void seen.push(`settings:${op.binding.meta.name}`),
      'Widget Settings',
    );
    lifecycleOf(t.site).on('beforeWrite', (op) => void seen.push(`all:${op.binding.meta.name}`));
    await create().expect(201);
    expect(seen).toEqual(['all:Widget']);
  });
});

describe('the order of the points on a real document', () => {
  test('insert', async () => {
    await create().expect(201);
    expect(log).toEqual([
      'authorizeSave',
      'beforeSave',
      'docEvent:before_insert',
      'chooseName',
      'docEvent:before_validate',
      'docEvent:validate',
      'docEvent:before_save',
      'validateSave',
      'checkValues',
      'beforeWrite',
      'afterWrite',
      'docEvent:after_insert',
      'docEvent:on_update',
      'afterCommit',
      'afterTransaction',
    ]);
  });

  test('save, then delete', async () => {
    const { body } = await create().expect(201);
    log = [];
    await t.http.put(`/api/resource/Widget/${body.data.name}`).set(auth()).send({ qty: 2 }).expect(200);
    expect(log).toEqual([
      'authorizeSave',
      'beforeSave',
      'docEvent:before_validate',
      'docEvent:validate',
      'docEvent:before_save',
      'validateSave',
      'checkValues',
      'beforeWrite',
      'afterWrite',
      'docEvent:on_update',
      'afterCommit',
      'afterTransaction',
    ]);
    log = [];
    await t.http.delete(`/api/resource/Widget/${body.data.name}`).set(auth()).expect(202);
    expect(log).toEqual([
      'authorizeDelete',
      'docEvent:on_trash',
      'beforeDelete',
      'afterDelete',
      'docEvent:after_delete',
      'afterCommit',
      'afterTransaction',
    ]);
  });
});

describe('failures and commits', () => {
  test.each([
    'authorizeSave',
    'beforeSave',
    'chooseName',
    'checkValues',
    'beforeWrite',
    'afterWrite',
  ] as const)('a throwing %s handler: 400, no row, and no afterCommit handler runs', async (point) => {
    const count = async () => Number((await t.site.db.knex('tabWidget').count({ n: '*' }))[0]?.n);
    const before = await count();
    failAt = point;
    const res = await create();
    expect(res.status).toBe(400);
    expect(res.body.exception).toContain(`${point} refused`);
    expect(await count()).toBe(before);
    expect(log[log.length - 1]).toBe(point);
    expect(log).not.toContain('afterCommit');
  });

  test('a throwing afterWrite handler on a save keeps the stored row as it was; no afterCommit', async () => {
    const { body } = await create().expect(201);
    failAt = 'afterWrite';
    log = [];
    const res = await t.http.put(`/api/resource/Widget/${body.data.name}`).set(auth()).send({ qty: 7 });
    expect(res.status).toBe(400);
    expect(await stored(body.data.name)).toEqual({ name: body.data.name, qty: 1 });
    expect(log).not.toContain('afterCommit');
  });

  test('a throwing afterDelete handler keeps the document; no afterCommit', async () => {
    const { body } = await create().expect(201);
    failAt = 'afterDelete';
    log = [];
    const res = await t.http.delete(`/api/resource/Widget/${body.data.name}`).set(auth());
    expect(res.status).toBe(400);
    expect(await stored(body.data.name)).toBeDefined();
    expect(log).not.toContain('afterCommit');
  });

  test('afterCommit runs once the row is committed (read from outside the transaction)', async () => {
    const seen: unknown[] = [];
    lifecycleOf(t.site).on(
      'afterCommit',
      async (op) => {
        if (op.kind === 'save' && op.data.title === 'committed probe') {
          expect(op.tx.trx).toBeUndefined();
          seen.push(await stored(op.doc.name));
        }
      },
      'Widget',
    );
    const { body } = await t.http
      .post('/api/resource/Widget')
      .set(auth())
      .send({ title: 'committed probe', qty: 3 })
      .expect(201);
    expect(seen).toEqual([{ name: body.data.name, qty: 3 }]);
  });

  test('a throwing afterCommit handler cannot undo the write, but the request fails', async () => {
    failAt = 'afterCommit';
    const before = await t.site.db.knex('tabWidget').where({ title: WATCHED }).count({ n: '*' });
    const res = await create();
    expect(res.status).toBe(400);
    const after = await t.site.db.knex('tabWidget').where({ title: WATCHED }).count({ n: '*' });
    expect(Number(after[0]?.n)).toBe(Number(before[0]?.n) + 1);
    expect(log.slice(-2)).toEqual(['afterCommit', 'afterTransaction']);
  });
});
