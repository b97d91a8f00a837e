// The query-string parser: the same parameters as node:querystring for any input, in a plain object whose keys never
// read through to Object.prototype.
import { parse } from 'node:querystring';
import fc from 'fast-check';
import { parseQuery } from '../../runtime/http/params';

/** Characters that matter to a query string's grammar and decoding, mixed with arbitrary text. */
const part = fc.stringMatching(
  /^(?:[a-z0-9]|%[0-9a-fA-F]{2}|%[g-z]?|\+|=|&|__proto__|constructor|toString|hasOwnProperty|é|\u{1F600})*$/u,
);

const entries = (params: object) => Object.entries(params).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

test('parses every query string as node:querystring does', () => {
  fc.assert(
    fc.property(fc.oneof(part, fc.string(), fc.string({ unit: 'grapheme' })), (query) => {
      expect(entries(parseQuery(query))).toEqual(entries(parse(query, '&', '=', { maxKeys: 0 })));
    }),
    { numRuns: 20000 },
  );
});

test.each([
  ['word=hi', { word: 'hi' }],
  ['a=1&a=2&a=3', { a: ['1', '2', '3'] }],
  ['flag&&=x&b=', { flag: '', '': 'x', b: '' }],
  ['q=a+b%2Bc&bad=%zz%41', { q: 'a b+c', bad: '%zzA' }],
  ['f=%5B%22status%22%5D', { f: '["status"]' }],
])('%s', (query, want) => {
  expect(entries(parseQuery(query))).toEqual(entries(want));
});

test.each(['__proto__=x', 'constructor=1', 'a=1&toString=2', '__pro%74o__=y'])(
  '%s stays a plain key, never the prototype',
  (query) => {
    const params = parseQuery(query);
    const key = Object.keys(parse(query))[Object.keys(parse(query)).length - 1] as string;
    expect(Object.prototype.hasOwnProperty.call(params, key)).toBe(true);
    expect(typeof params[key]).toBe('string');
    expect(Object.getPrototypeOf(params)).toBe(null);
  },
);

test('a query without such keys gives a plain object with no inherited reads', () => {
  const params = parseQuery('a=1');
  expect(Object.getPrototypeOf(params)).toBe(Object.prototype);
  expect(params.constructor).toBe(Object);
  expect(Object.keys(params)).toEqual(['a']);
});
