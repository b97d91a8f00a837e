// Requests node's HTTP parser refuses before the app sees them (a header block past 16 KB, a malformed request line)
// get the same JSON error body as every other refusal, then the connection closes; the server serves on.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { serve, type Served } from '../../runtime/cli/serve';
import { DEFAULT_SITE_CONFIG } from '../../runtime/config/config';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
let served: Served;
let port: number;
beforeAll(async () => {
  t = await createTestSite();
  await new Promise<void>((resolve) => {
    served = serve(t.app, t.site, { host: '127.0.0.1', port: 0 }, DEFAULT_SITE_CONFIG, resolve);
  });
  port = (served.server.address() as AddressInfo).port;
});
afterAll(async () => {
  served.server.closeAllConnections();
  await new Promise((resolve) => served.server.close(resolve));
  await t.close();
});

/** Sends raw bytes and answers everything the server wrote before it closed the connection. */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let out = '';
    socket.on('data', (chunk: Buffer) => (out += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(out));
  });
}

const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));

test.each([
  [
    'a request line and headers over 16 KB',
    `GET /api/resource/ToDo?fields=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: a\r\n\r\n`,
    431,
    'RequestHeaderFieldsTooLargeError',
  ],
  [
    'a header line without a colon',
    'GET /api/method/ping HTTP/1.1\r\nHost: a\r\nnonsense\r\n\r\n',
    400,
    'BadRequestError',
  ],
  ['not HTTP at all', 'HELLO\r\n\r\n', 400, 'BadRequestError'],
])('%s: a JSON error, then the connection closes', async (_label, bytes, status, excType) => {
  const answer = await raw(bytes);
  expect(answer.split('\r\n')[0]).toBe(
    `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}`,
  );
  expect(answer).toMatch(/\r\nContent-Type: application\/json/);
  expect(answer).toMatch(/\r\nConnection: close\r\n/);
  expect(bodyOf(answer).exc_type).toBe(excType);
  const ping = await raw('GET /api/method/ping HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
  expect(ping.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
});
