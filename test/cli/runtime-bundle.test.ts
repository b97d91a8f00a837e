// The runtime bundle: `svc` loads runtime/ from one cached file, and every later require of a runtime module (the
// commands, controllers, `doctype-service`) gets the bundled instance, never a second copy through tsx.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** Runs `script` in a fresh Node process with tsx, the runtime bundle installed first; returns what it printed. */
function afterInstall(script: string, env: NodeJS.ProcessEnv = {}): unknown {
  const code = `require('./runtime/cli/runtime-bundle').installRuntimeBundle().then(() => { ${script} })`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', code], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout) as unknown;
}

/** How many runtime modules (outside runtime/cli) were compiled one by one, and whether two paths share instances. */
const PROBE = `
  const path = require('node:path');
  const { Document } = require('doctype-service');
  const documentModule = require('./runtime/document/document');
  const runtime = path.join(process.cwd(), 'runtime') + path.sep;
  const compiled = Object.values(require.cache).filter((m) => m.filename.startsWith(runtime) && !m.filename.startsWith(runtime + 'cli') && m.children.length > 0);
  console.log(JSON.stringify({ sameDocument: Document === documentModule.Document, compiledOneByOne: compiled.length, createApp: typeof require('./runtime/app').createApp }));
`;

test('runtime modules come from the bundle, one instance whichever path requires them', () => {
  expect(afterInstall(PROBE)).toEqual({ sameDocument: true, compiledOneByOne: 0, createApp: 'function' });
}, 60_000);

test('SVC_BUNDLE=0 leaves the runtime to tsx', () => {
  const result = afterInstall(PROBE, { SVC_BUNDLE: '0' }) as {
    sameDocument: boolean;
    compiledOneByOne: number;
  };
  expect(result.sameDocument).toBe(true);
  expect(result.compiledOneByOne).toBeGreaterThan(0);
}, 60_000);
