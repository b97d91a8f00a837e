// Given/want tests for generator/emit/openapi.ts: paths and schemas of the v1 and v2 documents for a small DocType set.
import { emitOpenApi } from '../../generator/emit/openapi';
import { contextOf, docTypeIR } from '../helpers/doctype-ir';

const ctx = contextOf(
  docTypeIR({
    name: 'ToDo',
    fields: [
      { fieldname: 'status', fieldtype: 'Select', options: 'Open\nClosed\nCancelled', default: 'Open' },
      { fieldname: 'description', fieldtype: 'Text Editor', reqd: 1 },
      { fieldname: 'priority', fieldtype: 'Select', options: 'Low\nHigh', reqd: 1, default: 'Low' },
      { fieldname: 'checklist', fieldtype: 'Table', options: 'ToDo Item' },
    ],
  }),
  docTypeIR({ name: 'ToDo Item', istable: 1, fields: [{ fieldname: 'item', fieldtype: 'Data' }] }),
  docTypeIR({ name: 'ToDo Settings', issingle: 1, fields: [{ fieldname: 'days', fieldtype: 'Int' }] }),
);

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { operationId: string }>>;
  components: {
    schemas: Record<string, { properties: Record<string, Record<string, unknown>>; required?: string[] }>;
  };
};
const docs = emitOpenApi(ctx);
const parse = (path: string) => JSON.parse(docs.get(path) ?? 'null') as Doc;
const v1 = parse('openapi/v1.json');
const v2 = parse('openapi/v2.json');
const verbs = (doc: Doc, path: string) => Object.keys(doc.paths[path] ?? {}).sort();

describe('emitOpenApi', () => {
  test('emits exactly v1.json and v2.json, both OpenAPI 3.1.0 and ending in a newline', () => {
    expect([...docs.keys()]).toEqual(['openapi/v1.json', 'openapi/v2.json']);
    expect([v1.openapi, v2.openapi]).toEqual(['3.1.0', '3.1.0']);
    for (const text of docs.values()) expect(text.endsWith('}\n')).toBe(true);
  });

  const pathCases: Array<[doc: string, path: string, verbs: string[]]> = [
    ['v2', '/api/v2/document/ToDo', ['get', 'post']],
    ['v2', '/api/v2/document/ToDo/{name}', ['delete', 'get', 'patch', 'put']],
    ['v2', '/api/v2/document/ToDo/{name}/copy', ['get']],
    ['v2', '/api/v2/doctype/ToDo/count', ['get']],
    ['v2', '/api/v2/doctype/ToDo/meta', ['get']],
    ['v2', '/api/v2/doctype/ToDo%20Item/meta', ['get']],
    ['v2', '/api/v2/document/ToDo%20Item', []],
    ['v2', '/api/v2/document/ToDo%20Settings', []],
    ['v2', '/api/v2/document/ToDo%20Settings/ToDo%20Settings', ['get', 'patch', 'put']],
    ['v2', '/api/v2/document/ToDo%20Settings/{name}', []],
    ['v2', '/api/v2/doctype/ToDo%20Settings/count', []],
    ['v1', '/api/resource/ToDo', ['get', 'post']],
    ['v1', '/api/resource/ToDo/{name}', ['delete', 'get', 'put']],
    ['v1', '/api/resource/ToDo%20Item', []],
    ['v1', '/api/resource/ToDo%20Settings', []],
    ['v1', '/api/resource/ToDo%20Settings/ToDo%20Settings', ['get', 'put']],
    ['v1', '/api/resource/ToDo%20Settings/{name}', []],
  ];
  test.each(pathCases)('%s %s has %p', (which, path, want) =>
    expect(verbs(which === 'v1' ? v1 : v2, path)).toEqual(want),
  );

  test('a single DocType has no list: its document is named after the DocType, as the runtime serves it', () => {
    expect(v2.paths['/api/v2/document/ToDo%20Settings/ToDo%20Settings']?.get?.operationId).toBe(
      'v2_get_todo_settings',
    );
    expect(v1.paths['/api/resource/ToDo%20Settings/ToDo%20Settings']?.get?.operationId).toBe(
      'v1_get_todo_settings',
    );
  });

  test('the ToDo schemas: Select enum, required without defaults on create only, child tables by $ref', () => {
    const { ToDo: todo, ToDo_Create: create, ToDo_Update: update, ToDo_Row: row } = v2.components.schemas;
    expect(todo?.properties.status?.enum).toEqual(['', 'Open', 'Closed', 'Cancelled', null]);
    expect(todo?.required).toEqual(['doctype', 'name']);
    expect(create?.required).toEqual(['description']);
    expect(update?.required).toBeUndefined();
    expect(todo?.properties.checklist).toMatchObject({
      type: 'array',
      items: { $ref: '#/components/schemas/ToDoItem' },
    });
    expect(create?.properties.checklist).toMatchObject({
      items: { $ref: '#/components/schemas/ToDoItem_Create' },
    });
    expect(update?.properties.checklist).toMatchObject({
      items: { $ref: '#/components/schemas/ToDoItem_Update' },
    });
    expect(todo?.properties.doctype).toEqual({ type: 'string', const: 'ToDo' });
    expect(todo?.properties.owner).toMatchObject({ readOnly: true });
    expect(row?.properties.checklist).toBeUndefined();
    expect(row).toMatchObject({ additionalProperties: true });
    expect(Object.keys(v2.components.schemas).sort()).toEqual([
      'BulkResult',
      'Error',
      'Filters',
      'Job',
      'ToDo',
      'ToDoItem',
      'ToDoItem_Create',
      'ToDoItem_Update',
      'ToDoSettings',
      'ToDoSettings_Update',
      'ToDo_Create',
      'ToDo_Row',
      'ToDo_Update',
    ]);
  });

  test('PATCH takes the update schema (every key optional), POST the create schema', () => {
    type Op = { requestBody?: { content: Record<string, { schema: unknown }> } };
    const item = v2.paths['/api/v2/document/ToDo/{name}'] as unknown as Record<string, Op>;
    expect(item.patch?.requestBody?.content['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/ToDo_Update',
    });
    const list = v2.paths['/api/v2/document/ToDo'] as unknown as Record<string, Op>;
    expect(list.post?.requestBody?.content['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/ToDo_Create',
    });
  });

  test('v1 describes the /api/v1 aliases; ping and login ask no credentials', () => {
    expect(verbs(v1, '/api/v1/resource/ToDo')).toEqual(['get', 'post']);
    expect(v1.paths['/api/v1/resource/ToDo']?.get?.operationId).toBe('v1_alias_list_todo');
    for (const doc of [v1, v2]) {
      const prefix = doc === v1 ? '/api/method' : '/api/v2/method';
      const ping = doc.paths[`${prefix}/ping`] as unknown as Record<string, { security?: unknown[] }>;
      const login = doc.paths[`${prefix}/login`] as unknown as Record<string, { security?: unknown[] }>;
      expect(ping.get?.security).toEqual([]);
      expect(login.post?.security).toEqual([]);
      expect(Object.keys(doc.paths)).toContain(`${prefix}/frappe.ping`);
    }
    expect(Object.keys(v2.paths)).toContain('/api/v2/method/User/generate_keys');
  });

  test('paths are sorted and operation ids are unique', () => {
    for (const doc of [v1, v2]) {
      const paths = Object.keys(doc.paths);
      expect(paths).toEqual([...paths].sort());
      const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
      expect(new Set(ids).size).toBe(ids.length);
    }
  });
});
