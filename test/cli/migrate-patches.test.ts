// `svc migrate` with patches.txt (SVC_ROOT): a failing patch exits 1 with one line naming the patch and its error, no
// stack trace, and runs again on the next `svc migrate`, which then exits 0 and says what ran.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { patchProject } from '../helpers/patch-project';

const ROOT = path.resolve(__dirname, '../..');
const project = patchProject();
const database = path.join(
  ROOT,
  'test/tmp',
  `cli_patches_${process.pid}_${randomBytes(4).toString('hex')}.sqlite`,
);
afterAll(() => {
  project.remove();
  for (const ext of ['', '-wal', '-shm']) rmSync(database + ext, { force: true });
});

/** Runs `svc migrate` on the test database with the project's patches. */
function svcMigrate(): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/svc.js', 'migrate'], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: `sqlite:${database}`,
        SVC_ROOT: project.root,
        LOG_LEVEL: 'silent',
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

test('a failing patch exits 1 with one line; fixed, the next svc migrate runs it and exits 0', async () => {
  project.list('[post_model_sync]\npatches.cli.boom\n');
  project.patch(
    'patches.cli.boom',
    "export function execute(): void {\n  throw new Error('not today');\n}\n",
  );
  const failed = await svcMigrate();
  expect(failed.status).toBe(1);
  expect(failed.stderr.trim().split('\n')).toEqual([
    'patch patches.cli.boom (patches.txt:2) failed: not today',
  ]);

  project.patch('patches.cli.boom', 'export function execute(): void {}\n');
  const fixed = await svcMigrate();
  expect(fixed.stderr).toBe('');
  expect(fixed.status).toBe(0);
  expect(fixed.stdout).toContain('ran 1 patches: patches.cli.boom');
});
