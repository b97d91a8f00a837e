// whitelist(): the TC39 method decorator and the module-function wrapper; options resolved once, misuse refused early.
import { whitelist, whitelistOf, type HttpVerb } from '../../runtime/methods/whitelist';

test('the wrapper returns the function itself, marked with resolved defaults', async () => {
  const fn = async ({ a }: { a: number }) => a * 2;
  const wrapped = whitelist({}, fn);
  expect(wrapped).toBe(fn);
  expect(await wrapped({ a: 2 })).toBe(4);
  expect(whitelistOf(fn)).toEqual({
    methods: ['GET', 'POST', 'PUT', 'DELETE'],
    allowGuest: false,
    scopes: ['all'],
  });
  expect(whitelistOf(async () => 1)).toBeUndefined();
  expect(whitelistOf({})).toBeUndefined();
});

test('the decorator marks the method on the prototype; undecorated methods stay unmarked', () => {
  class Probe {
    @whitelist({ methods: ['POST'], allowGuest: true, rateLimit: { limit: 2, seconds: 9 } })
    async bump({ by }: { by: number }) {
      return by;
    }
    async plain() {
      return 0;
    }
  }
  expect(whitelistOf(Probe.prototype.bump)).toEqual({
    methods: ['POST'],
    allowGuest: true,
    rateLimit: { limit: 2, seconds: 9 },
    scopes: ['all'],
  });
  expect(whitelistOf(Probe.prototype.plain)).toBeUndefined();
});

test.each([
  [{ methods: ['PATCH' as HttpVerb] }, /unknown HTTP verb PATCH/],
  [{ rateLimit: { limit: 0, seconds: 1 } }, /positive integer/],
  [{ rateLimit: { limit: 1, seconds: 0.5 } }, /positive integer/],
])('options %j are refused when the module loads', (options, message) => {
  expect(() => whitelist(options, async () => 1)).toThrow(message);
});

test('the decorator refuses static methods', () => {
  expect(() => {
    class Bad {
      @whitelist({})
      static async nope() {
        return 1;
      }
    }
    return Bad;
  }).toThrow(/instance methods/);
});
