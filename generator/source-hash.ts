// The hash of a DocType file that generated/doctype-sources.json records and `svc serve` compares at start: SHA-1 of
// the file's text, so that a DocType edited but not regenerated is noticed. Loaded by the runtime too (cli/stale-doctypes.ts).
import { createHash } from 'node:crypto';

/** SHA-1 (hex) of a DocType file's text. */
export function sourceHash(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}
