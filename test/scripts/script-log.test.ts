// frappe.log in Server Scripts: the text is one JSON-encoded field of a normal process log line, so a Guest's input
// with newlines cannot forge a log line (issue #36 item 7).
import { Writable } from 'node:stream';
import { createLogger, logger, setLogger } from '../../runtime/log/logger';
import { closeRateLimits } from '../../runtime/methods/rate-limit';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { apiScript } from './script-helpers';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite();
  await apiScript(t, 'echo.log', 'frappe.log(frappe.form_dict.msg); frappe.response.message = 1', {
    allow_guest: 1,
  });
});
afterAll(async () => {
  await closeRateLimits(t.site);
  await t.close();
});

/** Runs `work` with the process log written into a string; returns the raw text. */
async function rawLog(work: () => Promise<unknown>): Promise<string> {
  const previous = logger();
  let text = '';
  setLogger(
    createLogger({
      level: 'info',
      destination: new Writable({
        write(chunk: Buffer, _enc, done) {
          text += chunk.toString();
          done();
        },
      }),
    }),
  );
  try {
    await work();
  } finally {
    setLogger(previous);
  }
  return text;
}

test("a Guest's newline cannot forge a log line: one line, the text as a JSON field", async () => {
  const forged = `hello\n{"level":50,"time":"2026-01-01T00:00:00.000Z","pid":1,"msg":"admin logged in"}\r\nend`;
  const text = await rawLog(async () => {
    const res = await t.http.post('/api/method/echo.log').send({ msg: forged });
    expect(res.status).toBe(200);
  });
  const lines = text.split('\n').filter(Boolean);
  expect(lines).toHaveLength(1);
  const entry = JSON.parse(lines[0] as string) as Record<string, unknown>;
  expect(entry).toMatchObject({
    level: 30,
    msg: 'server script log',
    script: expect.any(String),
    line: forged,
  });
  expect(text).not.toContain('\n{"level":50');
});

test('the entry is a normal process log line (level, time, pid, msg) through the redacting logger', async () => {
  const text = await rawLog(() => t.http.post('/api/method/echo.log').send({ msg: 'plain text' }));
  const entry = JSON.parse(text.trim()) as Record<string, unknown>;
  expect(entry.line).toBe('plain text');
  expect(Object.keys(entry).sort()).toEqual(['level', 'line', 'msg', 'pid', 'script', 'time']);
});
