// Generator: whitelisted methods read from controllers with ts-morph — argument types to JSON Schema (given/want),
// refused argument types as problems naming the file and method, and every method in both OpenAPI documents.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GeneratorProblems } from '../../generator/problems';
import { buildFiles } from '../../generator/run-generator';

const TMP = path.resolve(__dirname, '../tmp');
let dir: string;
beforeEach(() => {
  mkdirSync(TMP, { recursive: true });
  dir = mkdtempSync(path.join(TMP, 'methods-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Writes a DocType `Probe` with the given controller source under dir/doctypes/shop/probe/. */
function probe(controller: string, extra: Record<string, string> = {}): void {
  const folder = path.join(dir, 'doctypes/shop/probe');
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    path.join(folder, 'probe.json'),
    JSON.stringify({
      doctype: 'DocType',
      name: 'Probe',
      module: 'Shop',
      fields: [{ fieldname: 'qty', fieldtype: 'Int' }],
      permissions: [],
    }),
  );
  writeFileSync(
    path.join(folder, 'probe.ts'),
    `import { Document, whitelist } from 'doctype-service';\n${controller}`,
  );
  for (const [file, text] of Object.entries(extra)) writeFileSync(path.join(folder, file), text);
}
const build = () => buildFiles({ doctypes: ['doctypes'], out: 'generated', cwd: dir });
type OpenApi = {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { name: string; required: boolean; schema?: unknown; content?: unknown }[];
        requestBody?: { content: Record<string, { schema: unknown }> };
      }
    >
  >;
};

test.each([
  [
    '{ a: string }',
    { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false },
  ],
  [
    '{ n?: number; b: boolean }',
    {
      type: 'object',
      properties: { n: { type: 'number' }, b: { type: 'boolean' } },
      required: ['b'],
      additionalProperties: false,
    },
  ],
  [
    "{ mode: 'a' | 'b'; level: 1 | 2 }",
    {
      type: 'object',
      properties: { mode: { enum: ['a', 'b'] }, level: { enum: [1, 2] } },
      required: ['mode', 'level'],
      additionalProperties: false,
    },
  ],
  [
    '{ tags: string[]; pair: [string, number] }',
    {
      type: 'object',
      properties: {
        tags: { type: 'array', items: { type: 'string' } },
        pair: {
          type: 'array',
          prefixItems: [{ type: 'string' }, { type: 'number' }],
          minItems: 2,
          maxItems: 2,
        },
      },
      required: ['tags', 'pair'],
      additionalProperties: false,
    },
  ],
  [
    '{ s: string | null; any: unknown }',
    {
      type: 'object',
      properties: { s: { type: ['string', 'null'] }, any: {} },
      required: ['s'],
      additionalProperties: false,
    },
  ],
  [
    '{ map: Record<string, number> }',
    {
      type: 'object',
      properties: { map: { type: 'object', properties: {}, additionalProperties: { type: 'number' } } },
      required: ['map'],
      additionalProperties: false,
    },
  ],
  [
    'Args',
    {
      type: 'object',
      properties: {
        id: { type: 'string' },
        inner: {
          type: 'object',
          properties: { x: { type: 'number' } },
          required: ['x'],
          additionalProperties: false,
        },
      },
      required: ['id', 'inner'],
      additionalProperties: false,
    },
  ],
])('argument type %s becomes JSON Schema', async (type, want) => {
  probe(
    `interface Args { id: string; inner: { x: number } }\nexport const fn = whitelist({}, async (args: ${type}) => args);\n`,
  );
  const v2 = JSON.parse((await build()).files.get('openapi/v2.json') as string) as OpenApi;
  expect(
    v2.paths['/api/v2/method/shop.probe.probe.fn']?.post?.requestBody?.content['application/json']?.schema,
  ).toEqual(want);
});

test('a type imported from a neighbouring file resolves', async () => {
  probe(
    "import type { Order } from './types';\nexport const fn = whitelist({ methods: ['POST'] }, async (o: Order) => o);\n",
    {
      'types.ts': 'export interface Order { sku: string; qty: number }\n',
    },
  );
  const v1 = JSON.parse((await build()).files.get('openapi/v1.json') as string) as OpenApi;
  expect(
    v1.paths['/api/method/shop.probe.probe.fn']?.post?.requestBody?.content['application/json']?.schema,
  ).toMatchObject({ required: ['sku', 'qty'] });
  expect(Object.keys(v1.paths['/api/method/shop.probe.probe.fn'] ?? {})).toEqual(['post']);
});

test.each([
  ['export const fn = whitelist({}, async (s: string) => s);', 'function fn must take one object argument'],
  ['export const fn = whitelist({}, async (a: { when: Date }) => a);', 'Date has no JSON form'],
  ['export const fn = whitelist({}, async (a: { cb: () => void }) => a);', 'is a function'],
  [
    'export const fn = whitelist({}, async (a: { ignore_permissions?: boolean }) => a);',
    'may not take an argument named ignore_permissions',
  ],
  [
    'export default class P extends Document {\n  @whitelist({}) async m(a: { flags: object }) { return a; }\n}',
    'method m may not take an argument named flags',
  ],
])('%s is refused at build time', async (source, message) => {
  probe(`${source}\n`);
  const err = (await build().catch((e: unknown) => e)) as GeneratorProblems;
  expect(err).toBeInstanceOf(GeneratorProblems);
  expect(err.problems.map((p) => `${p.file}: ${p.message}`).join('\n')).toMatch(
    new RegExp(`doctypes/shop/probe/probe\\.ts: .*${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
  );
});

test('the OpenAPI documents hold every whitelisted method with its verbs and argument schema (v1 and v2)', async () => {
  probe(`export default class P extends Document {
  @whitelist({ methods: ['POST'], rateLimit: { limit: 1, seconds: 1 } }) async bump(a: { by: number }) { return a.by; }
  @whitelist({}) async look() { return 1; }
  helper() { return 0; }
}
export const stock = whitelist({ methods: ['GET'] }, async ({ sku, opts }: { sku: string; opts?: { deep: boolean } }) => sku);
export const plain = async () => 1;
`);
  const files = (await build()).files;
  const v1 = JSON.parse(files.get('openapi/v1.json') as string) as OpenApi;
  const v2 = JSON.parse(files.get('openapi/v2.json') as string) as OpenApi;
  for (const [doc, p] of [
    [v1, '/api/method/shop.probe.probe.stock'],
    [v2, '/api/v2/method/shop.probe.probe.stock'],
    [v2, '/api/v2/method/Probe/stock'],
  ] as const) {
    expect(Object.keys(doc.paths[p] ?? {})).toEqual(['get']);
    const params = doc.paths[p]?.get?.parameters ?? [];
    expect(params.map((x) => [x.name, x.required])).toEqual([
      ['sku', true],
      ['opts', false],
    ]);
    expect(params[1]?.content).toEqual({
      'application/json': {
        schema: {
          type: 'object',
          properties: { deep: { type: 'boolean' } },
          required: ['deep'],
          additionalProperties: false,
        },
      },
    });
  }
  expect(Object.keys(v2.paths['/api/v2/document/Probe/{name}/method/bump'] ?? {})).toEqual(['post']);
  expect(Object.keys(v2.paths['/api/v2/document/Probe/{name}/method/bump']?.post ?? {})).toContain(
    'requestBody',
  );
  expect(Object.keys(v2.paths['/api/v2/document/Probe/{name}/method/look'] ?? {})).toEqual(['get', 'post']);
  expect(
    v1.paths['/api/resource/Probe/{name}']?.post?.parameters?.find((x) => x.name === 'run_method')?.schema,
  ).toEqual({ type: 'string', enum: ['bump', 'look'] });
  // Neither the class's non-whitelisted helper nor the plain export has a path (the words themselves may appear in
  // descriptions, e.g. "a plain base name").
  for (const doc of [v1, v2])
    expect(Object.keys(doc.paths).filter((p) => /helper|plain/.test(p))).toEqual([]);
  for (const builtin of [
    'ping',
    'login',
    'run_doc_method',
    'frappe.client.get_list',
    'frappe.client.set_value',
  ]) {
    expect(v2.paths[`/api/v2/method/${builtin}`]).toBeDefined();
    expect(v1.paths[`/api/method/${builtin}`]).toBeDefined();
  }
  const methods = files.get('methods/probe.ts') as string;
  expect(methods).toMatch(
    /^\/\/ Code generated by generator\/emit\/methods\.ts from doctypes\/shop\/probe\/probe\.json\./,
  );
  expect(methods).toContain("path: 'shop.probe.probe.stock'");
  expect(files.get('index.ts')).toContain('methods: probe_methods.methods');
  // Same input, same bytes.
  const again = (await build()).files;
  for (const key of ['methods/probe.ts', 'openapi/v1.json', 'openapi/v2.json', 'index.ts'])
    expect(again.get(key)).toBe(files.get(key));
});

test('options that are not a literal still generate, with a warning naming the method', async () => {
  probe(
    "const POST_ONLY = { methods: ['POST' as const] };\nexport const fn = whitelist(POST_ONLY, async (a: { x?: string }) => a);\n",
  );
  const built = await build();
  expect(built.files.has('methods/probe.ts')).toBe(true);
  expect(built.warnings.map((w) => w.message).join('\n')).toContain(
    'function fn: whitelist options are not an object literal',
  );
});

test('a controller method shaped like a hook that is not one is a warning naming the hook it resembles', async () => {
  probe(`export default class Probe extends Document {
  on_udpate() {}
  valdate() {}
  before_print() {}
  on_update() {}
  validate() {}
  compute_total() {}
}
`);
  const built = await build();
  const warned = built.warnings.filter((w) => w.message.includes('looks like a lifecycle hook'));
  expect(warned.map((w) => [w.pointer, w.message.replace(/.*did you mean /, '')])).toEqual([
    ['/on_udpate', 'on_update?'],
    ['/valdate', 'validate?'],
    ['/before_print', expect.stringMatching(/^before_/)],
  ]);
  expect(warned.every((w) => w.file.endsWith('probe.ts') && w.severity === 'warning')).toBe(true);
});

type Answer = { type: string; properties: Record<string, unknown>; required?: string[] };
const answerOf = (doc: unknown, p: string, verb: string) =>
  (doc as { paths: Record<string, Record<string, { responses: Record<string, any> }>> }).paths[p]?.[verb]
    ?.responses['200']?.content['application/json']?.schema as Answer;

test('method results are typed from the return type: awaited, void leaves the key out, undefined makes it optional', async () => {
  probe(`interface Stock { sku: string; qty: number }
export default class P extends Document {
  @whitelist({ methods: ['POST'] }) async bump(a: { by: number }): Promise<number> { return a.by; }
  @whitelist({ methods: ['POST'] }) async nothing(): Promise<void> {}
}
export const stock = whitelist({ methods: ['GET'] }, async ({ sku }: { sku: string }): Promise<Stock> => ({ sku, qty: 42 }));
export const maybe = whitelist({ methods: ['GET'] }, (a: { k?: string }) => (a.k ? 'yes' : undefined));
export const when = whitelist({ methods: ['GET'] }, async () => new Date());
`);
  const files = (await build()).files;
  const v1 = JSON.parse(files.get('openapi/v1.json') as string) as unknown;
  const v2 = JSON.parse(files.get('openapi/v2.json') as string) as unknown;
  const stock = {
    type: 'object',
    properties: { sku: { type: 'string' }, qty: { type: 'number' } },
    required: ['sku', 'qty'],
    additionalProperties: false,
  };
  expect(answerOf(v1, '/api/method/shop.probe.probe.stock', 'get')).toMatchObject({
    properties: { message: stock },
    required: ['message'],
  });
  expect(answerOf(v2, '/api/v2/method/Probe/stock', 'get')).toMatchObject({
    properties: { data: stock },
    required: ['data'],
  });
  const maybe = answerOf(v2, '/api/v2/method/shop.probe.probe.maybe', 'get');
  expect(maybe.properties.data).toEqual({ enum: ['yes'] });
  expect(maybe.required).toBeUndefined();
  // A Date has no JSON Schema of its own: the result is any value.
  expect(answerOf(v2, '/api/v2/method/shop.probe.probe.when', 'get').properties.data).toEqual({});
  const bump = answerOf(v2, '/api/v2/document/Probe/{name}/method/bump', 'post');
  expect(bump.properties.data).toEqual({ type: 'number' });
  expect(bump.required).toEqual(['data', 'docs']);
  const nothing = answerOf(v2, '/api/v2/document/Probe/{name}/method/nothing', 'post');
  expect(nothing.properties.data).toBeUndefined();
  expect(Object.keys(nothing.properties)).toEqual(['docs', 'messages']);
});

test('@returnsSchema in JSDoc replaces the result read from the return type; a schema that is not JSON is refused', async () => {
  probe(`export default class P extends Document {
  /**
   * Reads the stock.
   * @returnsSchema {"type": "object", "required": ["qty"], "properties": {"qty": {"type": "integer", "minimum": 0}}}
   */
  @whitelist({ methods: ['GET'] }) async level() { return { qty: 1 }; }
}
/** @returnsSchema {"type": "string", "format": "date"} */
export const today = whitelist({ methods: ['GET'] }, async () => new Date().toISOString().slice(0, 10));
`);
  const v2 = JSON.parse((await build()).files.get('openapi/v2.json') as string) as unknown;
  expect(answerOf(v2, '/api/v2/method/shop.probe.probe.today', 'get')).toMatchObject({
    properties: { data: { type: 'string', format: 'date' } },
    required: ['data'],
  });
  expect(answerOf(v2, '/api/v2/document/Probe/{name}/method/level', 'get').properties.data).toEqual({
    type: 'object',
    required: ['qty'],
    properties: { qty: { type: 'integer', minimum: 0 } },
  });
  probe('/** @returnsSchema {not json} */\nexport const bad = whitelist({}, async () => 1);\n');
  const err = (await build().catch((e: unknown) => e)) as GeneratorProblems;
  expect(err).toBeInstanceOf(GeneratorProblems);
  expect(err.problems.map((p) => p.message).join('\n')).toMatch(/function bad: @returnsSchema is not JSON/);
});
