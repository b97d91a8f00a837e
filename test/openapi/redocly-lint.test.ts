// Both generated OpenAPI documents pass `@redocly/cli lint` with its recommended rules: no errors, no warnings.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = path.resolve(__dirname, '../..');

test.each(['v1', 'v2'])(
  'redocly lint (recommended) of %s: 0 errors, 0 warnings',
  async (version) => {
    const { stdout } = await run(
      path.join(root, 'node_modules/.bin/redocly'),
      ['lint', '--extends=recommended', '--format=json', `generated/openapi/${version}.json`],
      {
        cwd: root,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
    const report = JSON.parse(stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string }[];
    };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  },
  60_000,
);
