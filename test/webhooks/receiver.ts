// A webhook receiver on a loopback port for the webhook tests: records every request and answers with the status the
// test chooses (per request, in order, the last one repeating, or per path), or not at all.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestSite } from '../helpers/test-site';

/** One request a receiver got. */
export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A running receiver. */
export interface Receiver {
  url: string;
  requests: Received[];
  close(): Promise<void>;
}

/** How to answer: a status (with optional headers), or 'hang' (never answer). */
export type Answer = number | 'hang' | { status: number; headers: Record<string, string> };

/**
 * Starts a receiver on `host`:`port` (0: a free port, in its `url`) answering with `answers` in order (the last
 * repeats), or with what `answers` gives for each request's path.
 */
export async function startReceiver(
  port: number,
  answers: Answer[] | ((path: string) => Answer),
  host = '127.0.0.1',
): Promise<Receiver> {
  const requests: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const answer =
        typeof answers === 'function'
          ? answers(req.url ?? '')
          : (answers[Math.min(requests.length - 1, answers.length - 1)] ?? 200);
      if (answer === 'hang') return;
      if (typeof answer === 'number') res.writeHead(answer).end(`answer ${answer}`);
      else res.writeHead(answer.status, answer.headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}/hook`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Waits until `check` is true (polling), or fails after `ms`. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  ms = 10_000,
  what = 'condition',
): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The Webhook Request Log rows of a site, oldest first. */
export async function logRows(t: TestSite): Promise<Record<string, unknown>[]> {
  return (await t.site.db.knex('tabWebhook Request Log').orderBy('creation').select()) as Record<
    string,
    unknown
  >[];
}

/** Creates a webhook as Administrator; returns the response. */
export function createWebhook(t: TestSite, body: Record<string, unknown>) {
  return t.http
    .post('/api/resource/Webhook')
    .set('Authorization', t.adminToken)
    .send({ webhook_doctype: 'ToDo', webhook_docevent: 'after_insert', ...body });
}

/** Creates a ToDo as Administrator. */
export async function createTodo(t: TestSite, body: Record<string, unknown> = {}): Promise<string> {
  const res = await t.http
    .post('/api/resource/ToDo')
    .set('Authorization', t.adminToken)
    .send({ description: 'hello', ...body });
  if (res.status !== 200 && res.status !== 201)
    throw new Error(`ToDo: ${res.status} ${JSON.stringify(res.body)}`);
  return String(res.body.data.name);
}
