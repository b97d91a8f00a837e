// Bulk jobs on the embedded backend (the jobs table and the in-process worker): the shared suite.
import { bulkJobSuite } from './bulk-jobs-suite';

bulkJobSuite(() => ({ site: {} }));
