// The CRUD contract on v2: /api/v2/document.
import { v2 } from './api-version';
import { crudContract } from './crud.contract';

describe('v2', () => {
  crudContract(v2);
});
