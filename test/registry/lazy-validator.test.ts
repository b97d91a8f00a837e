// runtime/registry/lazy-validator.ts: the validator module is loaded at the first call, once, and ajv's `errors` of
// each call are passed on.
import { lazyValidator } from '../../runtime/registry/lazy-validator';
import type { BodyValidator } from '../../runtime/registry/registry';

/** A validator that accepts objects with a string `a`, in ajv's way: `errors` set on failure, null on success. */
function fakeAjv(): BodyValidator {
  const validate: BodyValidator = (data) => {
    const valid = typeof (data as { a?: unknown }).a === 'string';
    validate.errors = valid ? null : [{ instancePath: '/a', keyword: 'type', message: 'must be string' }];
    return valid;
  };
  return validate;
}

test('nothing is loaded until the first call, and the module only once', () => {
  let loads = 0;
  const validate = lazyValidator(() => {
    loads++;
    return { validateBody: fakeAjv() };
  });
  expect(loads).toBe(0);
  expect(validate({ a: 'x' })).toBe(true);
  expect(validate({ a: 'y' })).toBe(true);
  expect(loads).toBe(1);
});

test('the errors of the last call are the wrapper’s', () => {
  const validate = lazyValidator(() => ({ validateBody: fakeAjv() }));
  expect(validate({ a: 1 })).toBe(false);
  expect(validate.errors).toEqual([{ instancePath: '/a', keyword: 'type', message: 'must be string' }]);
  expect(validate({ a: 'x' })).toBe(true);
  expect(validate.errors).toBeNull();
});

test('a module that fails to load fails the call, and the next call tries again', () => {
  let loads = 0;
  const validate = lazyValidator(() => {
    if (++loads === 1) throw new Error('cannot load');
    return { validateBody: fakeAjv() };
  });
  expect(() => validate({ a: 'x' })).toThrow('cannot load');
  expect(validate({ a: 'x' })).toBe(true);
});
