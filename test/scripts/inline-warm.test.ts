// The first Server Script saved in a process is answered once the inline context (inline-sandbox.ts) is loaded, or a
// bounded wait for that has passed: the script's first calls run inline rather than in a worker. A file of its own, so
// that no earlier test has loaded the context in this module registry.
import { runInline } from '../../runtime/scripts/inline-sandbox';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { saveScript } from './script-helpers';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite();
});
afterAll(() => t.close());

test('saving the first Server Script of the process loads the inline context before the save is answered', async () => {
  const source = "if (doc.priority === 'Low') doc.priority = 'Medium'";
  await saveScript(t, {
    script_type: 'DocType Event',
    reference_doctype: 'ToDo',
    doctype_event: 'Before Save',
    script: source,
  });
  // Right after the answer, without waiting: runInline is undefined while the context is not loaded.
  const outcome = runInline(source, 'script.js', { doc: { priority: 'Low' }, user: 'Administrator' });
  expect(outcome).toMatchObject({ ok: true });
  expect(outcome?.ok && outcome.value).toEqual({ doc: { priority: 'Medium' } });
  // And the save runs it: a ToDo created now is saved with the script's change.
  const res = await t.http
    .post('/api/resource/ToDo')
    .set('Authorization', t.adminToken)
    .send({ description: 'warm', priority: 'Low' });
  expect(res.status).toBe(201);
  expect(res.body.data.priority).toBe('Medium');
});
