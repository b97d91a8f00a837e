// The wire over unique fields that are not Data (an Int, a Date, a Select) on a site whose migration made their unique
// indexes: a create or an update repeating a value is 409 DuplicateEntryError naming the field and stores nothing; an
// unset Int holds 0, which counts as a value (as Frappe's index). Without the flag (the index dropped) the value may
// repeat; with it again over the repeats, the site refuses to start, naming the field and the values.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { runGenerator } from '../../generator/run-generator';
import { createApp } from '../../runtime/app';
import { regenerateKeys } from '../../runtime/auth/api-keys';
import { closeSite, openSite } from '../../runtime/bootstrap';
import { DEFAULT_SITE_CONFIG } from '../../runtime/config/config';
import { indexName } from '../../runtime/db/table-columns';
import { createRegistry, type Registry } from '../../runtime/registry/registry';
import type { Site } from '../../runtime/site';
import { openMigrateDb, type MigrateDb } from './migrate-db';

jest.setTimeout(180_000);

const ROOT = path.resolve(__dirname, '../..');
const DIR = path.join(ROOT, 'test/tmp', `unique-api-${process.pid}-${randomBytes(4).toString('hex')}`);
const DOCTYPE = 'Mig Unique';
const TABLE = `tab${DOCTYPE}`;
const UNIQUE = ['seq', 'day', 'grade'];

let m: MigrateDb;
let registry: Registry;
let site: Site | undefined;
let http: ReturnType<typeof request>;
let token: string;

/** The generated registry with `unique` taken off `fields` of Mig Unique (all the generator derives from the flag). */
function withoutUnique(fields: string[]): Registry {
  return createRegistry(
    registry.all().map((b) =>
      b.meta.name !== DOCTYPE
        ? b
        : {
            ...b,
            meta: {
              ...b.meta,
              fields: b.meta.fields.map((f) => (fields.includes(f.fieldname) ? { ...f, unique: false } : f)),
            },
          },
    ),
  );
}

async function open(reg: Registry): Promise<void> {
  site = await openSite(
    {
      port: 0,
      host: '127.0.0.1',
      databaseUrl: m.url,
      adminPassword: 'admin-test-password',
      adminPasswordDefaulted: false,
      site: { ...DEFAULT_SITE_CONFIG, job_worker: false },
      filesPath: path.join(DIR, 'files'),
    },
    reg,
  );
  const keys = await regenerateKeys(site.db.knex, 'Administrator');
  token = `token ${keys!.api_key}:${keys!.api_secret}`;
  http = request(createApp(site, { onServerError: () => undefined }).callback());
}

async function close(): Promise<void> {
  if (site) await closeSite(site);
  site = undefined;
}

beforeAll(async () => {
  const folder = path.join(DIR, 'doctypes', 'test', 'mig_unique');
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    path.join(folder, 'mig_unique.json'),
    JSON.stringify({
      doctype: 'DocType',
      name: DOCTYPE,
      module: 'Test',
      autoname: 'hash',
      fields: [
        { fieldname: 'title', fieldtype: 'Data' },
        { fieldname: 'seq', label: 'Seq', fieldtype: 'Int', unique: 1 },
        { fieldname: 'day', label: 'Day', fieldtype: 'Date', unique: 1 },
        { fieldname: 'grade', label: 'Grade', fieldtype: 'Select', options: '\nA\nB\nC', unique: 1 },
      ],
      permissions: [{ role: 'System Manager', read: 1, write: 1, create: 1, delete: 1 }],
    }),
  );
  const out = path.join(DIR, 'generated');
  await runGenerator({
    doctypes: ['doctypes', path.relative(ROOT, path.join(DIR, 'doctypes'))],
    out,
    cwd: ROOT,
  });
  registry = (require(path.join(out, 'index.ts')) as { registry: Registry }).registry;
  m = await openMigrateDb();
  await open(registry);
});

afterAll(async () => {
  await close();
  await m?.close();
  rmSync(DIR, { recursive: true, force: true });
});

let nextSeq = 1000;
/** Creates a document (v1) with a Seq of its own unless `seq` says otherwise (null: none sent). */
const create = (body: object, seq: number | null = nextSeq++) =>
  http
    .post(`/api/resource/${DOCTYPE}`)
    .set('Authorization', token)
    .send({ title: 't', ...(seq === null ? {} : { seq }), ...body });
const update = (name: string, body: object) =>
  http.put(`/api/v2/document/${DOCTYPE}/${name}`).set('Authorization', token).send(body);
const count = async (where: Record<string, unknown> = {}) =>
  Number(((await m.knex(TABLE).where(where).count({ n: '*' })) as { n: unknown }[])[0]!.n);

test('the migration made a unique index on each unique field', async () => {
  const indexes = await m.db.schema.indexes(m.knex, TABLE);
  expect(UNIQUE.map((f) => indexes.get(indexName(TABLE, f))?.unique)).toEqual([true, true, true]);
});

test.each([
  ['seq', 'Seq', 41, 42],
  ['day', 'Day', '2026-03-01', '2026-03-02'],
  ['grade', 'Grade', 'A', 'B'],
])(
  'a create repeating %s is 409 naming the field; an update taking it too; nothing changes',
  async (field, label, value, other) => {
    const first = await create({ [field]: value });
    expect(first.status).toBe(201);
    const before = await count();
    const again = await create({ [field]: value });
    expect([again.status, again.body.exc_type]).toEqual([409, 'DuplicateEntryError']);
    expect(JSON.stringify(again.body)).toContain(`${label} must be unique`);
    expect(await count()).toBe(before);

    const second = (await create({ [field]: other })).body.data as { name: string; seq: number };
    const taken = await update(second.name, { [field]: value });
    expect([taken.status, taken.body.exc_type]).toEqual([409, 'DuplicateEntryError']);
    expect(await count({ name: second.name, [field]: other })).toBe(1);
    // Its own value saved again is no clash.
    expect((await update(second.name, { [field]: other, title: 'again' })).status).toBe(200);
  },
);

test('an unset Int holds 0, a value like any other: a second document without it is 409 naming the field', async () => {
  await m.knex(TABLE).where({ seq: 0 }).delete();
  const first = await create({ title: 'no seq' }, null);
  expect([first.status, first.body.data.seq]).toEqual([201, 0]);
  const second = await create({ title: 'no seq either' }, null);
  expect([second.status, second.body.exc_type]).toEqual([409, 'DuplicateEntryError']);
  expect(JSON.stringify(second.body)).toContain('Seq must be unique: 0 is already used');
  expect(await count({ seq: 0 })).toBe(1);
  // An unset Date or Select is NULL: never a clash.
  expect(await count({ day: null })).toBeGreaterThan(1);
});

// Two writers that check at once both find the value free; the unique index refuses the later one (on MariaDB and
// PostgreSQL once the first commits). That refusal is the same 409 naming the field, never a 500.
test('writes racing to one unique value: one is saved, the others are 409 naming the field', async () => {
  const names: string[] = [];
  for (let i = 0; i < 8; i++)
    names.push(((await create({ title: `racer ${i}` })).body.data as { name: string }).name);
  for (const [round, value] of [5001, 5002, 5003].entries()) {
    const answers = await Promise.all([
      ...names.map((name) => update(name, { seq: value })),
      ...names.slice(0, round + 1).map(() => create({ title: 'racing create' }, value)),
    ]);
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s !== 409)).toHaveLength(1);
    expect([200, 201]).toContain(statuses.find((s) => s !== 409));
    for (const refused of answers.filter((a) => a.status === 409)) {
      expect(refused.body.exc_type).toBe('DuplicateEntryError');
      expect(JSON.stringify(refused.body)).toContain(`Seq must be unique: ${value} is already used`);
    }
    expect(await count({ seq: value })).toBe(1);
  }
});

test('without the flag the index goes and a value repeats; with it again over the repeat, the site refuses to start', async () => {
  await close();
  await open(withoutUnique(['seq']));
  const indexes = await m.db.schema.indexes(m.knex, TABLE);
  expect(indexes.has(indexName(TABLE, 'seq'))).toBe(false);
  expect(indexes.get(indexName(TABLE, 'day'))?.unique).toBe(true);
  expect((await create({ seq: 41 })).status).toBe(201);
  expect(await count({ seq: 41 })).toBe(2);
  await close();

  const refused = await open(registry).then(
    () => 'started',
    (err: { excType?: string; message: string }) => `${err.excType}: ${err.message}`,
  );
  expect(refused).toBe(
    'SchemaConflictError: Mig Unique: cannot make seq unique: 1 value is held by more than one document ("41")',
  );
  expect((await m.db.schema.indexes(m.knex, TABLE)).has(indexName(TABLE, 'seq'))).toBe(false);
});
