// An inline run's result is read by the host from QuickJS's memory (hostEncode in sandbox-worker-source.ts) instead of
// being encoded by the guest: both must give the same outcome for every kind of value a straight-line script can leave
// (same values, same key order, the same runs void), and a run after one that changed the globals starts fresh.
import { inlineHostReads, inlineReady, runInline } from '../../runtime/scripts/inline-sandbox';

let nonce = 0;
/** An input no other call had (nothing is answered from remembered results). */
const fresh = () => ({
  form_dict: { nonce: nonce++ },
  user: 'Administrator',
  doc: { priority: 'Low', items: [{ qty: 1 }], description: 'x', '2': 'two', '10': 'ten' },
  conditions: true,
});

beforeAll(async () => {
  if (!(await inlineReady())) throw new Error('the inline sandbox did not load');
});
afterAll(() => {
  inlineHostReads(true);
});

test('the host reads results (the memory layout is the one it expects)', () => {
  expect(inlineHostReads(true)).toBe(true);
});

/** The outcome of `source` with the host reading the result, and with the guest encoding it (each its own script). */
function both(source: string): [string, string] {
  inlineHostReads(true);
  const host = runInline(`${source} // host`, 'script.js', fresh());
  inlineHostReads(false);
  const guest = runInline(`${source} // guest`, 'script.js', fresh());
  inlineHostReads(true);
  // JSON text: key order counts; a void run is "void".
  const text = (o: typeof host) => (o === undefined ? 'void' : JSON.stringify(o));
  return [text(host), text(guest)];
}

test.each([
  "if (doc.priority === 'Low') doc.priority = 'Medium'",
  'frappe.response.message = doc',
  'doc.z = 1; doc.a = 2; doc[5] = 3; doc.priority = undefined; frappe.response.message = doc',
  "doc = { b: 1, a: [1, 'x', null, true], '3': false, c: { d: undefined } }",
  "frappe.response.message = [NaN, -0, 1e21, 0.1 + 0.2, -Infinity, 2147483648, -2147483649, 'o1;']",
  'frappe.response.message = NaN; doc.a = -0; doc.b = Infinity; doc.c = 0 / 0; conditions = -Infinity',
  "frappe.response.message = 'é 😀 \\u2028 s3:x'; doc.description = 'a\\nb'; conditions = [['a', '=', 1]]",
  // Strings the host cannot read exactly: NUL and lone surrogates (the guest's encode answers).
  "frappe.response.message = 'a\\u0000b'",
  "doc.description = 'x\\u0000'; doc['a\\u0000b'] = 1",
  "frappe.response.message = '\\ud800'",
  "doc.description = ['\\udc00', '\\u0000']",
  "frappe.response.message = '\\ufffd'",
  // Long strings (read in bulk, not character by character), 8-bit and 16-bit, in values and keys.
  `frappe.response.message = '${'ab'.repeat(60)}'; doc.description = '${'é'.repeat(70)}'`,
  `doc['${'k'.repeat(70)}'] = '${'\u0100'.repeat(70)}'; doc['${'ké'.repeat(40)}'] = 1`,
  `frappe.response.message = '${'\u0100'.repeat(70)}\\ud800'`,
  `frappe.response.message = ['${'x'.repeat(70)}\\u0000']`,
  // Replaced globals.
  'frappe = null',
  'frappe = undefined; doc = undefined',
  "frappe = 'text'; doc = 'text'; conditions = 5",
  'frappe = frappe.get_list; doc = frappe',
  'frappe.response = 1; doc = [1, 2]; conditions = undefined',
  'frappe.response = frappe.db.count; doc = frappe.db.count',
  'frappe.response = null; doc = null; conditions = null',
  'frappe.response = { message: frappe.session }; doc = true',
  'frappe.response.message = frappe.db; doc = { f: frappe.db.count, g: undefined }',
  // A cycle: JSON.stringify throws, the run is void.
  'doc.self = doc; frappe.response.message = doc',
  'frappe.response.message = { a: doc.items, b: doc.items }',
])('the host reads what the guest encodes: %s', (source) => {
  const [host, guest] = both(source);
  expect(host).toBe(guest);
});

test('a run after runs that changed the globals and doc starts from a fresh context', () => {
  const source =
    'frappe.response.message = [frappe.leak, doc.seen, typeof conditions, frappe.session.user, doc.priority]; ' +
    "frappe.leak = 1; doc.seen = 1; doc.priority = 'High'; conditions = 1; frappe.session.user = 'x'";
  for (let i = 0; i < 4; i++) {
    const outcome = runInline(source, 'script.js', fresh());
    expect(JSON.stringify(outcome)).toBe(
      JSON.stringify({
        ok: true,
        value: {
          message: [null, null, 'undefined', 'Administrator', 'Low'],
          doc: { priority: 'High', seen: 1 },
          conditions: 1,
        },
        logs: [],
      }),
    );
  }
});

test.each([
  ['no doc, no form_dict', { user: 'Administrator' }],
  ['an empty user', { user: '' }],
  ['a user holding NUL', { user: 'a\u0000b', doc: { priority: 'Low' } }],
  ['a user with a lone surrogate', { user: 'a\ud800', doc: { priority: 'Low' } }],
  ['a null doc', { user: 'u', doc: null as unknown as Record<string, unknown> }],
  [
    'a nested form_dict',
    { user: 'u', form_dict: { a: { b: [1, '\u0000', '\ud800'] } }, doc: { priority: 'x\u0000' } },
  ],
  ['a doc with odd values', { user: 'u', doc: { priority: '\ud800', n: -0, m: 1e300, o: { p: [null] } } }],
])('the host sets the input as the guest parses it: %s', (label, given) => {
  const source =
    'frappe.response.message = [frappe.form_dict, frappe.session.user, typeof doc, ' +
    "typeof doc === 'object' && doc !== null ? [doc.priority, doc.n, doc.m, doc.o] : 0]";
  const run = (host: boolean, tag: string) => {
    inlineHostReads(host);
    const outcome = runInline(`${source} // ${tag}`, 'script.js', { ...given, conditions: true });
    inlineHostReads(true);
    return outcome === undefined ? 'void' : JSON.stringify(outcome);
  };
  const host = run(true, `host ${nonce}`);
  expect(host).toBe(run(false, `guest ${nonce++}`));
  if (!/NUL|surrogate|odd|nested/.test(label)) expect(host).not.toBe('void');
});
