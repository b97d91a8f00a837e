// Bench-only controller: the trivial whitelisted methods the method scenarios call (`npm run bench` generates the
// core DocTypes plus this folder into bench/tmp).
import { Document, whitelist } from 'doctype-service';

/** A DocType that exists only to carry the bench's methods. */
export default class BenchProbe extends Document {}

/** The cheapest possible whitelisted GET method. */
export const echo = whitelist({ methods: ['GET'] }, async ({ word }: { word?: string }) => word ?? 'ok');

/** The same with a rate limit that the bench never reaches, so it measures the limiter's cost. */
export const echo_limited = whitelist(
  { methods: ['GET'], rateLimit: { limit: 1_000_000_000, seconds: 3600 } },
  async ({ word }: { word?: string }) => word ?? 'ok',
);
