// The registry of the repo's DocTypes plus the key-source fixtures of test/auth/fixtures, generated into test/tmp.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { runGenerator } from '../../generator/run-generator';
import type { Registry } from '../../runtime/registry/registry';

const ROOT = path.resolve(__dirname, '../..');

/** Generates the registry (a few seconds) and returns it with a clean-up function. */
export async function authRegistry(): Promise<{ registry: Registry; remove: () => void }> {
  const dir = path.join(ROOT, 'test/tmp', `auth-gen-${process.pid}-${randomBytes(4).toString('hex')}`);
  await runGenerator({ doctypes: ['doctypes', 'test/auth/fixtures/doctypes'], out: dir, cwd: ROOT });
  const registry = (require(path.join(dir, 'index.ts')) as { registry: Registry }).registry;
  return { registry, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
