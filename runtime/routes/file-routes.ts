// The file rows: stored files served outside /api (runtime/files/serve-file.ts). Pure data, like the route table.
import type { RouteRow } from '../http/route-row';

const FILE = {
  verbs: ['GET'],
  operation: 'file',
  status: 200,
  envelope: 'raw',
  // Described in both OpenAPI documents (the paths are outside /api, the same for v1 and v2).
  openapi: [1, 2],
  // A GET changes nothing; no token, no scope (a private file checks the caller's right to read the File itself).
  request: 'none',
  response: 'file',
} as const;

/** `/files/{name}`: public files, no credentials needed; `/private/files/{name}`: readers of the File only. */
export const FILE_ROUTES: RouteRow[] = [
  { ...FILE, path: '/files/{name+}' },
  { ...FILE, path: '/private/files/{name+}' },
];
