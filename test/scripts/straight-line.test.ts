// Straight-line scripts run on the event loop thread: the check lets through the scripts it can bound (no loop, no
// function, no call, no built-in reached by name) and refuses every way around it that we know of; an inline run gives
// the same outcome as a worker's, sees nothing of an earlier call, and a run that does not end well is left to the
// workers.
import { inlineReady, runInline } from '../../runtime/scripts/inline-sandbox';
import { SandboxPool } from '../../runtime/scripts/sandbox-pool';
import type { HostReply } from '../../runtime/scripts/sandbox-protocol';
import { docMembers, isStraightLine } from '../../runtime/scripts/straight-line';

let denied: ReadonlySet<string>;
let pool: SandboxPool;
beforeAll(async () => {
  const names = await inlineReady();
  if (!names) throw new Error('the inline sandbox did not load');
  denied = names;
  pool = new SandboxPool(1);
});
afterAll(async () => {
  await pool.close();
});

const input = {
  form_dict: { word: 'hi', n: 2 },
  user: 'Administrator',
  doc: { priority: 'Low', items: [{ qty: 1 }], description: 'x' },
};

test('the guest built-ins are denied by name, data names are not', () => {
  for (const name of [
    'constructor',
    'prototype',
    '__proto__',
    'valueOf',
    'toString',
    'toJSON',
    'call',
    'apply',
    'bind',
    'lastIndexOf',
    'caller',
    'callee',
    'get',
    'values',
  ])
    expect([name, isStraightLine(`frappe.response.message = doc.${name}`, denied)]).toEqual([name, false]);
  for (const name of [
    'message',
    'name',
    'length',
    'description',
    'status',
    'priority',
    'response',
    'form_dict',
    'items',
  ])
    expect([name, isStraightLine(`frappe.response.message = doc.${name}`, denied)]).toEqual([name, true]);
});

test.each([
  'frappe.response.message = frappe.form_dict.word',
  "if (doc.priority === 'Low') doc.priority = 'Medium'",
  "conditions = [['priority', 'regexp', '.*'], ['status', '=', 'Open']]",
  'let total = doc.items[0].qty * 2; doc.total = total / 2',
  "const who = frappe.session.user; frappe.response.message = `${who}: ${frappe.form_dict['word']}`",
  "switch (doc.priority) { case 'Low': doc.priority = 'High'; break; default: doc.x = null }",
  "try { doc.a = doc.b.c } catch (e) { doc.a = 'none' } finally { doc.z = 1 }",
  '// a comment\n/* another */ frappe.response.message = { a: 1, "b c": [1, 2, { d: doc.priority ? 1 : 2 }] }',
  'frappe.response.message = doc?.items?.length > 0 && !(doc.x in doc)',
])('straight-line: %s', (source) => {
  expect(isStraightLine(source, denied)).toBe(true);
});

test.each([
  ['a call', "frappe.throw('x')"],
  ['a call through a variable', "let f = frappe.db.count; frappe.response.message = f('ToDo')"],
  ['a call of a parenthesised value', "frappe.response.message = (frappe.db.count)('ToDo')"],
  ['an optional call', "frappe.get_list?.('ToDo')"],
  ['a tagged template', 'frappe.log`x`'],
  ['new', 'frappe.response.message = new Date'],
  ['valueOf as a key', 'frappe.response.message = { valueOf: frappe.get_list } + 1'],
  ['valueOf as a quoted key', "frappe.response.message = { 'valueOf': frappe.get_list } + 1"],
  ['an escaped key', "frappe.response.message = { '\\x76alueOf': frappe.get_list } + 1"],
  ['a computed key', "frappe.response.message = { ['valueOf']: frappe.get_list } + 1"],
  [
    'a computed key after a comma',
    'frappe.response.message = { a: 1, [frappe.form_dict.k]: frappe.get_list } + 1',
  ],
  ['toString as a member', "let x = {}; x.toString = frappe.get_list; frappe.response.message = x + ''"],
  ['a computed member by name', "let x = {}; x['toJSON'] = frappe.get_list; frappe.response.message = x"],
  ['a computed member by expression', 'frappe.response.message = doc[frappe.form_dict.word]'],
  ['a declared denied name', 'let valueOf = frappe.get_list; frappe.response.message = { valueOf } + 1'],
  ['a built-in method by member', 'frappe.response.message = { valueOf: [].lastIndexOf, length: 2 ** 52 }'],
  ['a member of a number', 'frappe.response.message = 1.5.constructor'],
  ['a regular expression', 'frappe.response.message = /(a+)+b/'],
  ['a regular expression hiding code from a comment', 'let x = /[/*]/; doc.y = doc.constructor; /*/ */'],
  ['a regular expression after if (...)', 'if (doc.a) /re/.x'],
  ['an HTML comment', 'doc.a = 1 <!-- doc.constructor'],
  ['an HTML close comment', 'doc.a = 1\n--> doc.constructor'],
  ['a line comment ended by U+2028', '// c\u2028doc.constructor.constructor'],
  ['an escaped identifier', 'doc.\\u0063onstructor'],
  ['a non-ASCII identifier', 'let é = 1'],
  ['while', 'while (true) {}'],
  ['for', 'for (;;) {}'],
  ['do', 'do {} while (1)'],
  ['an arrow', 'frappe.response.message = () => 1'],
  ['a function', 'function f() {}'],
  ['a getter', 'frappe.response.message = { get a() { return 1 } }'],
  ['this', 'frappe.response.message = this'],
  ['globalThis', 'frappe.response.message = globalThis'],
  ['a built-in global', 'frappe.response.message = Array'],
  ['an undeclared name', 'leaked = 1'],
  ['eval', "eval('1')"],
  ['a BigInt', 'frappe.response.message = 10n ** 1000000n'],
  ['a far index', "let a = []; a[4294967294] = 1; frappe.response.message = a + ''"],
  ['an assigned length', "let a = []; a.length = 4294967295; frappe.response.message = a + ''"],
  ['a compound-assigned length', "let a = []; a['length'] += 4294967295"],
  ['spread', 'frappe.response.message = [...doc.items]'],
  ['destructuring', 'const { constructor } = doc'],
  ['__proto__ as a key', 'frappe.response.message = { __proto__: doc }'],
  ['__proto__ as a member', 'doc.__proto__.x = 1'],
  ['with', 'with (doc) {}'],
  ['import()', "import('x')"],
  ['a hashbang', '#!/bin/sh\ndoc.a = 1'],
  ['an unterminated string', "doc.a = 'x"],
  ['an unterminated comment', 'doc.a = 1 /* x'],
  ['unbalanced brackets', 'doc.a = (1'],
  ['a long script', `doc.a = ${'1 + '.repeat(1500)}1`],
])('not straight-line: %s', (_label, source) => {
  expect(isStraightLine(source, denied)).toBe(false);
});

const hostError = (): HostReply => ({ err: { excType: 'ServerScriptError', status: 500, message: 'x' } });
const noHost = () => Promise.reject(new Error('no host calls here'));

test.each([
  'frappe.response.message = frappe.form_dict.word',
  "if (doc.priority === 'Low') doc.priority = 'Medium'",
  "conditions = [['priority', '=', doc.priority]]",
  'frappe.response.message = `${frappe.session.user}/${frappe.form_dict.n * 3}`',
  "doc.note = doc['description'] + doc.items.length; doc.priority = undefined",
  'frappe.response.message = doc',
  // What crosses back as values (JSON): strings with escapes, NUL and non-ASCII, numbers JSON writes as null,
  // values JSON leaves out, nested values, a replaced doc.
  "frappe.response.message = 'q\"b\\\\c\\n\\u0001 \\u0000 é 😀 \\u2028 s3:x'; doc.description = [NaN, -0, 1e21, 0.1 + 0.2, -Infinity, 'o1;']",
  'doc.priority = null; doc.description = { a: undefined, b: frappe.db.count, c: [undefined, frappe.get_list] }; frappe.response.message = frappe.db.count',
  "doc.items = undefined; doc['a:b'] = true; doc['1'] = false; frappe.response.message = undefined; conditions = null",
  "doc = 5; frappe.response.message = { '': 1, n: 1.5e-7 }",
  'doc = [doc.priority, frappe.session]; conditions = frappe.session.user',
])('an inline run gives the outcome a worker gives: %s', async (source) => {
  const inline = runInline(source, 'script.js', { ...input, conditions: true });
  const worker = await pool.run(
    source,
    'script.js',
    JSON.stringify({ ...input, conditions: true }),
    noHost,
    hostError,
  );
  expect(inline?.ok).toBe(true);
  expect(worker.ok).toBe(true);
  const mine = (inline?.ok && inline.value) as Record<string, Record<string, unknown> | undefined>;
  const theirs = JSON.parse((worker.ok && worker.json) || '{}') as Record<
    string,
    Record<string, unknown> | undefined
  >;
  expect(mine.message).toEqual(theirs.message);
  expect(mine.conditions).toEqual(theirs.conditions);
  // Inline, the document carries the fields the script sees; they are as the worker leaves them.
  const fields = docMembers(source);
  const seen = fields
    ? Object.fromEntries(fields.filter((f) => theirs.doc && f in theirs.doc).map((f) => [f, theirs.doc?.[f]]))
    : theirs.doc;
  expect(mine.doc).toEqual(seen);
});

test.each([
  ["if (doc.priority === 'Low') doc.priority = 'Medium'", ['priority']],
  ["doc.a = doc['b'] + doc?.c", ['a', 'b', 'c']],
  ['frappe.response.message = { doc: 1 }', undefined],
  ['frappe.response.message = doc', undefined],
  ["frappe.response.message = 'a' in doc", undefined],
  ['doc = { a: 1 }', undefined],
  ['frappe.response.message = doc[0]', undefined],
  ['frappe.response.message = frappe.doc', []],
])('the fields of doc a script sees: %s', (source, fields) => {
  expect(docMembers(source)).toEqual(fields);
});

test('every inline call starts from a fresh context', () => {
  const source = 'frappe.response.message = [frappe.leak, doc.seen]; frappe.leak = 1; doc.seen = 1';
  for (let i = 0; i < 3; i++) {
    const outcome = runInline(source, 'script.js', input);
    expect(outcome?.ok && outcome.value).toEqual({ message: [null, null], doc: { seen: 1 } });
  }
});

test('inline calls share one context, but nothing a call can reach survives it', () => {
  // A new user each time: each call sees its own input, none of what the previous one set.
  const source =
    'frappe.response.message = [frappe.leak, doc.seen, frappe.session.user, typeof conditions]; frappe.leak = 1; doc.seen = 1; conditions = 2';
  for (let i = 0; i < 5; i++) {
    const outcome = runInline(source, 'script.js', { ...input, user: `fresh-${i}@example.com` });
    expect(outcome?.ok && outcome.value).toEqual({
      message: [null, null, `fresh-${i}@example.com`, 'undefined'],
      doc: { seen: 1 },
    });
  }
  // The host functions are the only objects two calls share, and they are frozen.
  const tag =
    'frappe.db.count.leak = 1; frappe.get_list.leak = 2; frappe.response.message = frappe.db.count.leak';
  expect(isStraightLine(tag, denied)).toBe(true);
  const tagged = runInline(tag, 'script.js', input);
  expect(tagged?.ok && tagged.value).toEqual({ doc: {} });
  const read = runInline(
    'frappe.response.message = [frappe.db.count.leak, frappe.get_list.leak]',
    'script.js',
    input,
  );
  expect(read?.ok && read.value).toEqual({ message: [null, null], doc: {} });
});

test('the caller owns the values it gets: changing them changes no later answer', () => {
  const source =
    'doc.tags = [doc.priority, { n: 1 }]; frappe.response.message = { user: frappe.session.user }';
  const first = runInline(source, 'script.js', input);
  const values = (first?.ok && first.value) as { doc: { tags: unknown[] }; message: { user: string } };
  values.doc.tags.push('changed');
  values.message.user = 'changed';
  const again = runInline(source, 'script.js', input);
  expect(again?.ok && again.value).toEqual({
    doc: { priority: 'Low', tags: ['Low', { n: 1 }] },
    message: { user: 'Administrator' },
  });
});

test('a run that fails inline is void and the script goes to the workers from then on', () => {
  const source = 'frappe.response.message = doc.missing.x';
  expect(isStraightLine(source, denied)).toBe(true);
  expect(runInline(source, 'script.js', input)).toBeUndefined();
  // Now it is not even tried: an input on which it would succeed goes to the workers too.
  expect(
    runInline(source, 'script.js', { user: 'Administrator', doc: { missing: { x: 1 } } }),
  ).toBeUndefined();
});

test('a straight-line script that doubles a string runs out of its 8 MB at once and is left to the workers', () => {
  const source = `let s = 'xxxxxxxxxxxxxxxx'; ${'s = s + s; '.repeat(40)} frappe.response.message = s.length`;
  expect(isStraightLine(source, denied)).toBe(true);
  const started = performance.now();
  expect(runInline(source, 'script.js', input)).toBeUndefined();
  // At once: well under what 40 doublings would take to reach 16 TB; generous, a loaded machine stalls threads.
  expect(performance.now() - started).toBeLessThan(1000);
});
