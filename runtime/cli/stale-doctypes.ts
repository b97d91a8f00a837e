// The DocTypes edited (or added, or removed) under doctypes/ since `npm run generate` last wrote generated/: each file's
// hash is compared with generated/doctype-sources.json, and `svc serve` logs one warning per DocType, after it is
// listening (the files are read then: start-up does not wait for them). A file whose hash is recorded is not parsed.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { logger } from '../log/logger';

/** The file generated/ records the DocType files in (generator/emit/doctype-sources.ts). */
const SOURCES_FILE = 'doctype-sources.json';

/** Files read at once. */
const READ_AT_ONCE = 32;

/** A DocType whose file no longer matches generated/. */
export interface StaleDocType {
  doctype: string;
  /** Its file, relative to the doctypes folder. */
  file: string;
  /** `changed`: edited since; `new`: not generated yet; `removed`: generated, its file gone. */
  change: 'changed' | 'new' | 'removed';
}

/** The `.json` files under `dir`, relative to it with forward slashes. */
async function jsonFiles(dir: string, rel = ''): Promise<string[]> {
  const entries = await fs.readdir(path.join(dir, rel), { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const entry of entries) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await jsonFiles(dir, child)));
    else if (entry.isFile() && entry.name.endsWith('.json')) out.push(child);
  }
  return out;
}

/** The name of the DocType a file declares, or undefined when it is no DocType file (or not JSON). */
function declaredDocType(text: string): string | undefined {
  try {
    const json = JSON.parse(text) as { doctype?: unknown; name?: unknown };
    return json.doctype === 'DocType' && typeof json.name === 'string' ? json.name : undefined;
  } catch {
    return undefined;
  }
}

/** The DocTypes under `doctypesDir` that differ from what `generatedDir` was generated from; [] without a record. */
export async function staleDocTypes(doctypesDir: string, generatedDir: string): Promise<StaleDocType[]> {
  let recorded: Record<string, { doctype: string; sha1: string }>;
  try {
    const text = await fs.readFile(path.join(generatedDir, SOURCES_FILE), 'utf8');
    recorded = (JSON.parse(text) as { sources: typeof recorded }).sources;
  } catch {
    return [];
  }
  const stale: StaleDocType[] = [];
  const seen = new Set<string>();
  const files = (await jsonFiles(doctypesDir)).sort();
  // A few files at a time: the reads overlap, and the event loop (serving already) is never held long.
  for (let i = 0; i < files.length; i += READ_AT_ONCE) {
    const batch = files.slice(i, i + READ_AT_ONCE);
    const texts = await Promise.all(batch.map((file) => fs.readFile(path.join(doctypesDir, file), 'utf8')));
    batch.forEach((file, j) => {
      const text = texts[j] as string;
      const known = recorded[file];
      // The hash generator/source-hash.ts records (test/cli/stale-doctypes.test.ts keeps the two equal).
      if (known?.sha1 === createHash('sha1').update(text).digest('hex')) {
        seen.add(file);
        return;
      }
      const doctype = declaredDocType(text);
      if (doctype === undefined) return;
      seen.add(file);
      stale.push({ doctype, file, change: known ? 'changed' : 'new' });
    });
  }
  for (const [file, { doctype }] of Object.entries(recorded))
    if (!seen.has(file)) stale.push({ doctype, file, change: 'removed' });
  return stale;
}

const SAYS: Record<StaleDocType['change'], string> = {
  changed: 'changed since generated/ was written',
  new: 'is not in generated/',
  removed: 'is in generated/ but its file is gone',
};

/** Logs one warning per DocType that no longer matches generated/; resolves with them. */
export async function warnStaleDocTypes(doctypesDir: string, generatedDir: string): Promise<StaleDocType[]> {
  const stale = await staleDocTypes(doctypesDir, generatedDir);
  for (const { doctype, file, change } of stale)
    logger().warn(
      { event: 'doctype_not_generated', doctype, file, change },
      `DocType ${doctype} (${file}) ${SAYS[change]}: the server runs the generated one; run \`npm run generate\` and restart`,
    );
  return stale;
}
