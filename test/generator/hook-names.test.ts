// misspelledHook: which controller method names are taken for a mistyped lifecycle hook (given name, want hook).
import { misspelledHook } from '../../generator/methods/hook-names';
import { HOOKS } from '../../runtime/document/hooks';

test.each([
  ['on_udpate', 'on_update'],
  ['validte', 'validate'],
  ['before_svae', 'before_save'],
  ['after_insrt', 'after_insert'],
  ['On_Update', 'on_update'],
  ['on_trsh', 'on_trash'],
])('%s is taken for %s', (name, hook) => {
  expect(misspelledHook(name)).toBe(hook);
});

test.each(['compute_total', 'set_title', 'validate_dates', 'update_stock', 'save', 'name', 'describe'])(
  '%s is not taken for a hook',
  (name) => {
    expect(misspelledHook(name)).toBeUndefined();
  },
);

test('no hook is taken for a misspelling of itself', () => {
  for (const hook of HOOKS) expect(misspelledHook(hook)).toBeUndefined();
});
