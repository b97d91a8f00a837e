// Given/want tests for generator/json-schema.ts: the JSON Schema of each field type, and its date/time patterns.
import Ajv from 'ajv';
import {
  DATETIME_PATTERN,
  DATE_PATTERN,
  TIME_PATTERN,
  fieldSchema,
  requiredFields,
} from '../../generator/json-schema';
import { contextOf, docTypeIR, fieldOf } from '../helpers/doctype-ir';

const row = docTypeIR({ name: 'Line', istable: 1, fields: [{ fieldname: 'item', fieldtype: 'Data' }] });
const doc = docTypeIR({
  name: 'Order',
  fields: [
    { fieldname: 'title', fieldtype: 'Data', label: 'Title', reqd: 1 },
    { fieldname: 'code', fieldtype: 'Data', length: 20 },
    { fieldname: 'phone', fieldtype: 'Phone' },
    { fieldname: 'notes', fieldtype: 'Small Text' },
    { fieldname: 'status', fieldtype: 'Select', options: 'Open\nClosed', reqd: 1, default: 'Open' },
    { fieldname: 'done', fieldtype: 'Check', reqd: 1 },
    { fieldname: 'qty', fieldtype: 'Int', non_negative: 1 },
    { fieldname: 'delta', fieldtype: 'Int' },
    { fieldname: 'amount', fieldtype: 'Currency', non_negative: 1 },
    { fieldname: 'due', fieldtype: 'Date' },
    { fieldname: 'at', fieldtype: 'Datetime' },
    { fieldname: 'starts', fieldtype: 'Time' },
    { fieldname: 'data', fieldtype: 'JSON' },
    { fieldname: 'lines', fieldtype: 'Table', options: 'Line', reqd: 1 },
  ],
});
const ctx = contextOf(doc, row);
const rowRef = { $ref: '#/components/schemas/Line' };
const schemaOf = (fieldname: string) => fieldSchema(fieldOf(doc, fieldname), ctx, () => rowRef);

const cases: Array<[fieldname: string, want: Record<string, unknown>]> = [
  ['title', { type: ['string', 'null'], maxLength: 140, description: 'Title' }],
  ['code', { type: ['string', 'null'], maxLength: 20 }],
  ['phone', { type: ['string', 'null'], maxLength: 140 }],
  ['notes', { type: ['string', 'null'] }],
  ['status', { type: ['string', 'null'], enum: ['', 'Open', 'Closed', null] }],
  ['done', { type: 'integer', enum: [0, 1] }],
  ['qty', { type: ['integer', 'null'], minimum: 0, maximum: 2147483647 }],
  ['delta', { type: ['integer', 'null'], minimum: -2147483648, maximum: 2147483647 }],
  ['amount', { type: ['number', 'null'], minimum: 0, exclusiveMaximum: 1e12 }],
  ['due', { type: ['string', 'null'], pattern: DATE_PATTERN }],
  ['at', { type: ['string', 'null'], pattern: DATETIME_PATTERN }],
  ['starts', { type: ['string', 'null'], pattern: TIME_PATTERN }],
  ['data', { type: ['object', 'array', 'string', 'number', 'boolean', 'null'] }],
  ['lines', { type: 'array', items: rowRef }],
];

describe('fieldSchema', () => {
  test.each(cases)('%s', (fieldname, want) => expect(schemaOf(fieldname)).toMatchObject(want));

  test("text without a length bound has no maxLength; a number's bounds are its column's (MariaDB's int, decimal(21,9))", () => {
    expect(schemaOf('notes')).not.toHaveProperty('maxLength');
    expect(schemaOf('delta')).toMatchObject({ minimum: -(2 ** 31), maximum: 2 ** 31 - 1 });
    expect(schemaOf('amount')).toMatchObject({ minimum: 0, exclusiveMaximum: 1e12 });
  });

  test('required: reqd fields without a default, tables excluded', () => {
    expect(requiredFields(doc.meta)).toEqual(['title', 'done']);
  });
});

const patterns: Array<[name: string, pattern: string, accepted: string[], refused: string[]]> = [
  [
    'Date',
    DATE_PATTERN,
    // '' is an empty date (stored as NULL, as Frappe's get_valid_dict makes it).
    ['2024-01-31', '1999-12-01', ''],
    ['31-01-2024', '2024/01/31', '2024-1-31', '2024-01-31 10:00', 'today', ' '],
  ],
  [
    'Datetime',
    DATETIME_PATTERN,
    [
      '2024-01-31 10:05:00',
      '2024-01-31 10:05',
      '2024-01-31T10:05:00',
      '2024-01-31 10:05:00.123456',
      '2024-01-31',
      '',
    ],
    ['2024-01-31 10', '2024-01-31 10:05:00.1234567', '31-01-2024 10:05:00', '2024-01-31 10:05:00 PM', 'now'],
  ],
  [
    'Time',
    TIME_PATTERN,
    ['10:05', '9:05', '10:05:07', '10:05:07.5', '23:59:59.999999', ''],
    ['10', '10-05', '10:5', '10:05 PM', 'noon'],
  ],
];

describe.each(patterns)('%s pattern', (_name, pattern, accepted, refused) => {
  const check = new Ajv().compile({ type: 'string', pattern });
  test.each(accepted)('accepts %p', (value) => expect(check(value)).toBe(true));
  test.each(refused)('refuses %p', (value) => expect(check(value)).toBe(false));
});
