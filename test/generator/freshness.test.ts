// The committed generated/ folder is fresh: regenerating from doctypes/ gives exactly the files on disk, byte for byte.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { buildFiles } from '../../generator/run-generator';

const ROOT = path.resolve(__dirname, '../..');

/** Every file under `dir`, relative to it with forward slashes, sorted. */
function filesUnder(dir: string, rel = ''): string[] {
  return readdirSync(path.join(dir, rel), { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? filesUnder(dir, path.posix.join(rel, e.name)) : [path.posix.join(rel, e.name)],
    )
    .sort();
}

test('generated/ equals what `npm run generate` would write (run it when this fails)', async () => {
  const { files } = await buildFiles({ doctypes: ['doctypes'], out: 'generated', cwd: ROOT });
  const onDisk = filesUnder(path.join(ROOT, 'generated'));
  expect(onDisk).toEqual([...files.keys()].sort());
  const stale = onDisk.filter(
    (rel) => readFileSync(path.join(ROOT, 'generated', rel), 'utf8') !== files.get(rel),
  );
  expect(stale).toEqual([]);
});
