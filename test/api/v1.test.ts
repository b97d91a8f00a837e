// The CRUD contract on v1: /api/resource and its alias /api/v1/resource.
import { v1 } from './api-version';
import { crudContract } from './crud.contract';

describe.each(['/api', '/api/v1'] as const)('v1 under %s', (prefix) => {
  crudContract(v1(prefix));
});
