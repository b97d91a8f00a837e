// Concurrent creates that each take the first number of a new naming series (a `format:` name with a field in its
// prefix): every one is 201, and each prefix's numbers run 1, 2, 3 … without a gap or a repeat. On MariaDB the series
// row was made by an UPDATE that found nothing, then an INSERT: two transactions doing that for neighbouring prefixes
// each held a gap lock the other's INSERT waited for, and the deadlock (1213) was answered 500.
import { registry as defaultRegistry } from '../../generated';
import { createRegistry } from '../../runtime/registry/registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

/** ToDo named by its description: FMT-<description>-0001, a series per description. */
const registry = createRegistry(
  defaultRegistry.all().map((binding) =>
    binding.meta.name === 'ToDo'
      ? {
          ...binding,
          meta: { ...binding.meta, naming: { kind: 'format', pattern: 'FMT-{description}-{####}' } },
        }
      : binding,
  ),
);

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry });
});
afterAll(() => t?.close());

test.each([1, 2])(
  'round %i: 30 parallel creates over 6 new prefixes are all 201, each prefix numbered 1 to 5',
  async (round) => {
    const categories = Array.from({ length: 6 }, (_, i) => `r${round}c${i}`);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        t.http
          .post('/api/resource/ToDo')
          .set('Authorization', t.adminToken)
          .send({ description: categories[i % categories.length] }),
      ),
    );
    expect(answers.map((res) => res.status)).toEqual(Array(30).fill(201));
    for (const category of categories) {
      const names = answers
        .map((res) => res.body.data.name as string)
        .filter((name) => name.startsWith(`FMT-${category}-`))
        .sort();
      expect(names).toEqual([1, 2, 3, 4, 5].map((n) => `FMT-${category}-000${n}`));
    }
  },
);
