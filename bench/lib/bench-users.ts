// Set-up for the feature scenarios, all through the public API as Administrator: a restricted user with User
// Permissions and keys of its own, a session cookie, an OAuth bearer token, and System Settings changes.
import { ADMIN_PASSWORD } from './service';

async function call(
  base: string,
  path: string,
  init: RequestInit & { auth?: string },
  what: string,
): Promise<any> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...(init.headers as Record<string, string>),
  };
  if (init.auth) headers.authorization = init.auth;
  const res = await fetch(`${base}${path}`, { ...init, headers });
  const text = await res.text();
  if (!res.ok) throw new Error(`${what}: ${res.status} ${text.slice(0, 500)}`);
  return JSON.parse(text || '{}');
}

/** Logs in as `usr` and returns the `sid` cookie header value. */
export async function sessionCookie(
  base: string,
  usr = 'Administrator',
  pwd = ADMIN_PASSWORD,
): Promise<string> {
  const res = await fetch(`${base}/api/method/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ usr, pwd }),
  });
  if (!res.ok) throw new Error(`login ${usr}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  const sid = res.headers
    .getSetCookie()
    .map((c) => /^sid=([^;]*)/.exec(c)?.[1])
    .find(Boolean);
  if (!sid) throw new Error(`login ${usr} set no sid cookie`);
  return `sid=${sid}`;
}

/**
 * A bearer token for Administrator, as a client gets one: an OAuth Client with the client-credentials grant acting as
 * Administrator (scope `all`), then the token endpoint (tokens are stored only as digests, so none can be inserted).
 */
export async function bearerToken(base: string, adminAuth: string): Promise<string> {
  const client = await call(
    base,
    '/api/resource/OAuth Client',
    {
      method: 'POST',
      auth: adminAuth,
      body: JSON.stringify({
        app_name: `bench ${Date.now().toString(36)}`,
        grant_type: 'Client Credentials',
        user: 'Administrator',
        scopes: 'all',
      }),
    },
    'create OAuth Client',
  );
  const { client_id: id, client_secret: secret } = client.data ?? {};
  if (!id || !secret)
    throw new Error(`OAuth Client answer has no client_id/client_secret: ${JSON.stringify(client)}`);
  const res = await fetch(`${base}/api/method/frappe.integrations.oauth2.get_token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: id,
      client_secret: secret,
    }).toString(),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`get_token: ${res.status} ${text.slice(0, 500)}`);
  const token = (JSON.parse(text) as { access_token?: string }).access_token;
  if (!token) throw new Error(`get_token gave no access_token: ${text.slice(0, 500)}`);
  return `Bearer ${token}`;
}

/**
 * A user without System Manager: role `Bench Reader` only (ToDo is readable through `All` for its owner), two User
 * Permissions (User = itself, ToDo = the document it reads), and API keys. Returns its token header and one ToDo it owns.
 */
export async function restrictedUser(
  base: string,
  adminAuth: string,
): Promise<{ auth: string; todo: string }> {
  const email = `bench.reader.${Date.now().toString(36)}@example.com`;
  await call(
    base,
    '/api/resource/Role',
    { method: 'POST', auth: adminAuth, body: JSON.stringify({ role_name: 'Bench Reader' }) },
    'create role',
  ).catch((err: Error) => {
    if (!/409/.test(err.message)) throw err;
  });
  await call(
    base,
    '/api/resource/User',
    {
      method: 'POST',
      auth: adminAuth,
      body: JSON.stringify({ email, first_name: 'Bench', roles: [{ role: 'Bench Reader' }] }),
    },
    'create user',
  );
  const keys = await call(
    base,
    '/api/method/frappe.core.doctype.user.user.generate_keys',
    { method: 'POST', auth: adminAuth, body: JSON.stringify({ user: email }) },
    'generate keys',
  );
  const auth = `token ${keys.message.api_key}:${keys.message.api_secret}`;
  const todo = await call(
    base,
    '/api/resource/ToDo',
    { method: 'POST', auth, body: JSON.stringify({ description: 'bench restricted', allocated_to: email }) },
    'create ToDo as the restricted user',
  );
  const name = String(todo.data.name);
  for (const [allow, value] of [
    ['User', email],
    ['ToDo', name],
  ]) {
    await call(
      base,
      '/api/resource/User Permission',
      {
        method: 'POST',
        auth: adminAuth,
        body: JSON.stringify({ user: email, allow, for_value: value, apply_to_all_doctypes: 1 }),
      },
      `User Permission ${allow}`,
    );
  }
  return { auth, todo: name };
}

/** Sets System Settings fields (a Single). */
export async function setSystemSettings(
  base: string,
  adminAuth: string,
  values: Record<string, unknown>,
): Promise<void> {
  await call(
    base,
    '/api/resource/System Settings/System Settings',
    { method: 'PUT', auth: adminAuth, body: JSON.stringify(values) },
    'update System Settings',
  );
}
