// Write coalescing: responses ended in one event-loop turn are sent together in its check phase, unchanged.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import Koa from 'koa';
import { createWriteCoalescing } from '../../runtime/middleware/write-coalescing';
import { createTestSite } from '../helpers/test-site';

const checkPhase = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A response stand-in that records what reaches it. */
function fakeResponse(log: string[], name: string, failing = false) {
  return {
    end: jest.fn((...args: unknown[]) => {
      if (failing) throw new Error(`${name} cannot be sent`);
      log.push(`${name}:${args.map(String).join(',')}`);
    }),
    destroy: jest.fn((err?: Error) => log.push(`${name} destroyed: ${err?.message}`)),
  };
}

/** Runs the middleware for a fake response whose handler calls `end` with each of `calls`. */
async function respond(res: ReturnType<typeof fakeResponse>, ...calls: unknown[][]): Promise<void> {
  const ctx = { res } as unknown as Koa.Context;
  await createWriteCoalescing()(ctx, async () => {
    for (const args of calls) (ctx.res.end as (...a: unknown[]) => unknown)(...args);
  });
}

describe('write coalescing', () => {
  test('a response ended by the handler is sent in the check phase, not before', async () => {
    const log: string[] = [];
    const res = fakeResponse(log, 'a');
    const original = res.end;
    await respond(res, ['body']);
    await Promise.resolve();
    expect(original).not.toHaveBeenCalled();
    await checkPhase();
    expect(log).toEqual(['a:body']);
    expect(res.end).toBe(original);
  });

  test('responses ended in one turn are sent together, in the order they ended', async () => {
    const log: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((n) => fakeResponse(log, n));
    await Promise.all([respond(b!, ['2']), respond(a!, ['1']), respond(c!, ['3'])]);
    expect(log).toEqual([]);
    await checkPhase();
    expect(log).toEqual(['b:2', 'a:1', 'c:3']);
  });

  test('every end call of one response is replayed in order', async () => {
    const log: string[] = [];
    const res = fakeResponse(log, 'a');
    await respond(res, ['x'], []);
    await checkPhase();
    expect(log).toEqual(['a:x', 'a:']);
  });

  test('a response that cannot be sent is destroyed and the others still go', async () => {
    const log: string[] = [];
    const bad = fakeResponse(log, 'bad', true);
    const good = fakeResponse(log, 'good');
    await respond(bad, ['1']);
    await respond(good, ['2']);
    await checkPhase();
    expect(log).toEqual(['bad destroyed: bad cannot be sent', 'good:2']);
  });

  describe('over real connections', () => {
    let server: http.Server;
    let port: number;
    beforeAll(async () => {
      const app = new Koa();
      app.use(createWriteCoalescing());
      app.use(async (ctx) => {
        if (ctx.path === '/stream') {
          ctx.type = 'text/plain';
          ctx.body = Readable.from(['one ', 'two ', 'three']);
          return;
        }
        if (ctx.path === '/slow') await new Promise((resolve) => setTimeout(resolve, 20));
        ctx.body = { path: ctx.path, n: Number(ctx.query.n) };
      });
      server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const get = (path: string, method = 'GET') =>
      new Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port, path, method, agent: false }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
        });
        req.on('error', reject);
        req.end();
      });

    test('concurrent requests on their own connections each get their own complete answer', async () => {
      const answers = await Promise.all(Array.from({ length: 40 }, (_, n) => get(`/item?n=${n}`)));
      answers.forEach((answer, n) => {
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.body)).toEqual({ path: '/item', n });
        expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
      });
    });

    test('a streamed body, a HEAD and a response that waited for a timer are all sent whole', async () => {
      const [stream, head, slow] = await Promise.all([
        get('/stream'),
        get('/item?n=1', 'HEAD'),
        get('/slow?n=7'),
      ]);
      expect(stream.body).toBe('one two three');
      expect(head.status).toBe(200);
      expect(head.body).toBe('');
      expect(JSON.parse(slow.body)).toEqual({ path: '/slow', n: 7 });
    });
  });

  test('the site config key coalesce_writes turns it off', async () => {
    const on = await createTestSite();
    const off = await createTestSite({ site: { coalesce_writes: false } });
    try {
      const names = (app: Koa) => (app.middleware as Array<{ name: string }>).map((m) => m.name);
      expect(names(on.app)).toContain('writeCoalescing');
      expect(names(off.app)).not.toContain('writeCoalescing');
      const res = await off.http.get('/api/method/ping');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: 'pong' });
    } finally {
      await on.close();
      await off.close();
    }
  });
});
