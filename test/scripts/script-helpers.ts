// Helpers for the server script tests: saving Server Script documents over REST as Administrator.
import type { TestSite } from '../helpers/test-site';

let counter = 0;

/** Saves a Server Script (Administrator) and returns its name; throws with the answer when it is refused. */
export async function saveScript(t: TestSite, fields: Record<string, unknown>): Promise<string> {
  const name = (fields.name as string | undefined) ?? `script-${process.pid}-${++counter}`;
  const res = await t.http
    .post('/api/resource/Server Script')
    .set('Authorization', t.adminToken)
    .send({ ...fields, name });
  if (res.status !== 201) throw new Error(`Server Script refused: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.name as string;
}

/** Saves an API script answering `method`. */
export function apiScript(
  t: TestSite,
  method: string,
  script: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  return saveScript(t, { script_type: 'API', api_method: method, script, ...extra });
}
