// The Koa context is typed, not cast: Koa's state is declared once (runtime/http/state.ts) and koa-body types the
// parsed body, so no runtime file casts the context, its state, the request body or the response body.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const RUNTIME = join(__dirname, '..', '..', 'runtime');

/** Every TypeScript file under a folder. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const CASTS: [string, RegExp][] = [
  ['a cast to AppContext', / as AppContext\b/],
  ['a double cast', / as unknown as /],
  ['a cast of ctx.state', /\(ctx\.state as /],
  ['a cast of the request body', /ctx\.request(\.body)?\)? as /],
  ['a cast of the response body', /\(ctx\.body as /],
];

test('the runtime casts neither the Koa context, its state, nor a request or response body', () => {
  const found: string[] = [];
  for (const file of sourceFiles(RUNTIME)) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      for (const [what, pattern] of CASTS)
        if (pattern.test(line)) found.push(`${file}:${i + 1}: ${what}: ${line.trim()}`);
    });
  }
  expect(found).toEqual([]);
});

test('the check finds each kind of cast, and not the words of a comment', () => {
  const casts = [
    '    const state = (ctx as AppContext).state;',
    '  if (secure) (ctx.cookies as unknown as { secure: boolean }).secure = true;',
    '  const cached = (ctx.state as { clientIp?: string }).clientIp;',
    '  const body = (ctx.request as { body?: unknown }).body;',
    '  const body = ctx.request.body as Record<string, unknown>;',
    '  delete (ctx.body as Record<string, unknown>)[key];',
  ];
  for (const line of casts)
    expect([line, CASTS.some(([, pattern]) => pattern.test(line))]).toEqual([line, true]);
  expect(CASTS.some(([, pattern]) => pattern.test('// refuse a malformed request as a whole (400)'))).toBe(
    false,
  );
});
