// Server Scripts of type DocType Event: Frappe's order relative to the controller hooks, inside the document's
// transaction (host calls included), Before-event changes saved, frappe.throw rolling everything back with 400, host
// calls with the saving user's permissions, nested scripts capped, a changed script used at the next save.
import { countRows } from '../api/api-version';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { saveScript } from './script-helpers';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });

/** Saves a DocType Event script; returns its name. */
const onEvent = (doctype: string, event: string, script: string) =>
  saveScript(t, { script_type: 'DocType Event', reference_doctype: doctype, doctype_event: event, script });

/** Disables scripts by name so later tests start clean. */
async function disable(...names: string[]): Promise<void> {
  for (const name of names)
    expect(
      (await t.http.put(`/api/resource/Server Script/${name}`).set(auth()).send({ disabled: 1 })).status,
    ).toBe(200);
}

const mark = (label: string) =>
  `if (doc.title && doc.title.startsWith('order')) doc.hook_log = (doc.hook_log ? doc.hook_log + ',' : '') + '${label}'`;

test("scripts run after the controller's hook of the same moment, in Frappe's order", async () => {
  const names = [
    await onEvent('Widget', 'Before Insert', mark('S:Before Insert')),
    await onEvent('Widget', 'Before Validate', mark('S:Before Validate')),
    await onEvent('Widget', 'Before Save', mark('S:Before Save')),
  ];
  const res = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'order-1' });
  expect(res.status).toBe(201);
  expect(String(res.body.data.hook_log).split(',')).toEqual([
    'before_insert',
    'S:Before Insert',
    'before_naming',
    'autoname',
    'before_validate',
    'S:Before Validate',
    'validate',
    'S:Before Save',
    'before_save',
  ]);
  const stored = await t.site.db.knex('tabWidget').where({ name: res.body.data.name }).first();
  expect(stored.hook_log).toBe(res.body.data.hook_log);
  await disable(...names);
});

test('changes to doc in a Before event are saved; identity fields and unknown keys are not taken', async () => {
  const name = await onEvent(
    'Widget',
    'Before Save',
    "if (doc.title === 'change-me') { doc.qty = 42; doc.notes = 'by script'; doc.owner = 'evil@example.com'; doc.name = 'renamed'; doc.not_a_field = 1; doc.__proto__ = { polluted: 1 } }",
  );
  const res = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'change-me', qty: 1 });
  expect(res.status).toBe(201);
  expect(res.body.data.qty).toBe(42);
  const stored = await t.site.db.knex('tabWidget').where({ name: res.body.data.name }).first();
  expect(stored).toMatchObject({ qty: 42, notes: 'by script', owner: 'Administrator' });
  expect(res.body.data.name).not.toBe('renamed');
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  // Changes in an After event are not saved (as Frappe).
  const after = await onEvent('Widget', 'After Save', "if (doc.title === 'after-change') doc.qty = 99");
  const res2 = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'after-change', qty: 1 });
  expect((await t.site.db.knex('tabWidget').where({ name: res2.body.data.name }).first()).qty).toBe(1);
  await disable(name, after);
});

test('host calls run inside the transaction: a document created in After Insert commits with it, or not at all', async () => {
  const name = await onEvent(
    'Widget',
    'After Insert',
    "if (doc.title.startsWith('linked')) { const todo = frappe.new_doc('ToDo', { description: 'for ' + doc.name }); frappe.db.set_value('ToDo', todo.name, 'priority', 'High'); if (doc.title === 'linked-fail') frappe.throw('refused after insert'); }",
  );
  const ok = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'linked-ok' });
  expect(ok.status).toBe(201);
  const todos = await t.site.db.knex('tabToDo').where({ description: `for ${ok.body.data.name}` });
  expect(todos).toHaveLength(1);
  expect(todos[0].priority).toBe('High');
  const widgets = await countRows(t, 'Widget');
  const allTodos = await countRows(t, 'ToDo');
  const fail = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'linked-fail' });
  expect(fail.status).toBe(400);
  expect(fail.body.exc_type).toBe('ValidationError');
  expect(fail.body.exception).toContain('refused after insert');
  expect(await countRows(t, 'Widget')).toBe(widgets);
  expect(await countRows(t, 'ToDo')).toBe(allTodos);
  await disable(name);
});

test('reads inside an event script see committed data and do not block the transaction', async () => {
  const name = await onEvent(
    'Widget',
    'Before Save',
    "if (doc.title === 'reader') { doc.qty = frappe.db.count('ToDo', {}); doc.notes = String(frappe.get_list('ToDo', { fields: ['name'], limit: 1 }).length) + ':' + frappe.db.get_value('User', 'Administrator', 'name') }",
  );
  const todos = await countRows(t, 'ToDo');
  const res = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'reader' });
  expect(res.status).toBe(201);
  expect(res.body.data.qty).toBe(todos);
  expect(res.body.data.notes).toBe(`${todos > 0 ? 1 : 0}:Administrator`);
  await disable(name);
});

test('a Before Delete script that throws keeps the document; After Delete runs after the row is gone', async () => {
  const before = await onEvent(
    'Widget',
    'Before Delete',
    "if (doc.title === 'keep-me') frappe.throw('not deletable')",
  );
  const after = await onEvent(
    'Widget',
    'After Delete',
    "if (doc.title === 'log-delete') frappe.new_doc('ToDo', { description: 'deleted ' + doc.name + ' exists=' + frappe.db.count('Widget', { name: doc.name }) })",
  );
  const kept = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'keep-me' });
  const del = await t.http.delete(`/api/resource/Widget/${kept.body.data.name}`).set(auth());
  expect(del.status).toBe(400);
  expect(await t.site.db.knex('tabWidget').where({ name: kept.body.data.name }).first()).toBeDefined();
  const gone = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'log-delete' });
  expect((await t.http.delete(`/api/resource/Widget/${gone.body.data.name}`).set(auth())).status).toBe(202);
  expect(
    await t.site.db.knex('tabToDo').where('description', 'like', `deleted ${gone.body.data.name}%`),
  ).toHaveLength(1);
  await disable(before, after);
});

test('submit and cancel events, and the submitted-document variants', async () => {
  const names = [
    await onEvent('Gadget Order', 'Before Submit', "doc.remarks = 'submitted by script'"),
    await onEvent(
      'Gadget Order',
      'Before Cancel',
      "if (doc.customer === 'stay') frappe.throw('cannot cancel')",
    ),
    await onEvent(
      'Gadget Order',
      'Before Save (Submitted Document)',
      "doc.remarks = 'updated after submit: ' + doc.remarks",
    ),
  ];
  const created = await t.http
    .post('/api/resource/Gadget Order')
    .set(auth())
    .send({ customer: 'stay', qty: 1 });
  expect(created.status).toBe(201);
  const name = created.body.data.name as string;
  const submitted = await t.http.put(`/api/resource/Gadget Order/${name}`).set(auth()).send({ docstatus: 1 });
  expect(submitted.status).toBe(200);
  expect(submitted.body.data.remarks).toBe('submitted by script');
  const cancel = await t.http.put(`/api/resource/Gadget Order/${name}`).set(auth()).send({ docstatus: 2 });
  expect(cancel.status).toBe(400);
  expect((await t.site.db.knex('tabGadget Order').where({ name }).first()).docstatus).toBe(1);
  await disable(...names);
});

test("host calls in an event script have the saving user's permissions: a refused write rolls the save back", async () => {
  const user = await createUser(t, 'event-user@example.com', ['System Manager']);
  const plain = await createUser(t, 'event-plain@example.com', []);
  const name = await onEvent(
    'ToDo',
    'Before Insert',
    "if (doc.description === 'escalate') frappe.new_doc('Role', { role_name: 'Escalated By Script' })",
  );
  const before = await countRows(t, 'ToDo');
  const refused = await t.http
    .post('/api/resource/ToDo')
    .set('Authorization', plain)
    .send({ description: 'escalate' });
  expect(refused.status).toBe(403);
  expect(await countRows(t, 'ToDo')).toBe(before);
  expect(await t.site.db.knex('tabRole').where({ name: 'Escalated By Script' }).first()).toBeUndefined();
  const allowed = await t.http
    .post('/api/resource/ToDo')
    .set('Authorization', user)
    .send({ description: 'escalate' });
  expect(allowed.status).toBe(201);
  expect(await t.site.db.knex('tabRole').where({ name: 'Escalated By Script' }).first()).toBeDefined();
  await disable(name);
});

test('a script saving a document that runs the script again (A→B→A…) stops at the depth limit: 500, nothing saved', async () => {
  const name = await onEvent(
    'Widget',
    'After Save',
    "if (doc.title === 'loop') frappe.db.set_value('Widget', doc.name, 'qty', (doc.qty || 0) + 1)",
  );
  const before = await countRows(t, 'Widget');
  const res = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'loop' });
  expect(res.status).toBe(500);
  expect(res.body.exc_type).toBe('ServerScriptError');
  expect(res.body.exception).toMatch(/nested more than 5 deep/);
  expect(await countRows(t, 'Widget')).toBe(before);
  expect((await t.http.get('/api/method/ping')).status).toBe(200);
  await disable(name);
});

test('a changed event script takes effect at the next save; disabled scripts do not run', async () => {
  const name = await onEvent('Widget', 'Before Save', "if (doc.title === 'versioned') doc.notes = 'one'");
  const first = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'versioned' });
  expect(first.body.data.notes).toBe('one');
  await t.http
    .put(`/api/resource/Server Script/${name}`)
    .set(auth())
    .send({ script: "if (doc.title === 'versioned') doc.notes = 'two'" });
  const second = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'versioned' });
  expect(second.body.data.notes).toBe('two');
  await disable(name);
  const third = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'versioned' });
  expect(third.body.data.notes ?? null).toBeNull();
});

test('a DocType without controller hooks or scripts gets the scripts saved afterwards at its next save', async () => {
  // ToDo has no controller: its saves skip the hooks without a promise while the loaded scripts have none for it.
  const before = await t.http.post('/api/resource/ToDo').set(auth()).send({ description: 'no scripts yet' });
  expect(before.status).toBe(201);
  expect(before.body.data.description).toBe('no scripts yet');
  const name = await onEvent('ToDo', 'Before Save', "doc.description = 'set by ' + 'script'");
  const after = await t.http.post('/api/resource/ToDo').set(auth()).send({ description: 'scripts now' });
  expect(after.status).toBe(201);
  expect(after.body.data.description).toBe('set by script');
  await disable(name);
  const disabled = await t.http.post('/api/resource/ToDo').set(auth()).send({ description: 'off again' });
  expect(disabled.body.data.description).toBe('off again');
});

test('a DocType Event script must name a DocType and one of the events', async () => {
  const noDoctype = await t.http.post('/api/resource/Server Script').set(auth()).send({
    name: 'bad-event-1',
    script_type: 'DocType Event',
    reference_doctype: 'Nope',
    doctype_event: 'Before Save',
    script: '1',
  });
  expect(noDoctype.status).toBe(400);
  const noEvent = await t.http.post('/api/resource/Server Script').set(auth()).send({
    name: 'bad-event-2',
    script_type: 'DocType Event',
    reference_doctype: 'Widget',
    doctype_event: 'Before Rename',
    script: '1',
  });
  expect(noEvent.status).toBe(400);
});
