// `svc serve` start-up with the migration check (issue #31: with nothing pending, no slower than before migrations
// ran patches under a lock): spawn to "serving" with the fixture DocTypes on a database an earlier start migrated, so the
// check finds nothing pending, with site config auto_migrate true (the run takes the migration lock, reads the recorded
// hashes) and false (a dry run: reads them without the lock). This checkout (B) against ROOT_A (default: this one),
// each on a database of its own, in interleaved rounds; the first start of each (fresh database: every table made) is
// printed too.
//   npx tsx bench/migrate-startup.ts                 GENERATED (default bench/tmp/fixtures-gen, see bench/run.ts)
//   ROOT_A=/path/to/other/checkout ROUNDS=5 PORT=4830 npx tsx bench/migrate-startup.ts
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { detectPinning, freePort, pinned, removeOnExit, runMain, startServer, stopChild } from './lib/procs';

const ROOT_B = path.resolve(__dirname, '..');
const ROOT_A = path.resolve(process.env.ROOT_A ?? ROOT_B);
const GENERATED = path.resolve(process.env.GENERATED ?? path.join(ROOT_B, 'bench/tmp/fixtures-gen'));
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const TMP = path.join(ROOT_B, 'bench/tmp', `migrate-startup-${process.pid}`);

type Side = 'A' | 'B';
type Mode = 'auto_migrate' | 'check_only';

async function start(side: Side, mode: Mode | 'fresh'): Promise<number> {
  const root = side === 'A' ? ROOT_A : ROOT_B;
  const config = path.join(TMP, `site-${mode}.json`);
  writeFileSync(config, JSON.stringify({ job_worker: false, auto_migrate: mode !== 'check_only' }));
  const port = process.env.PORT ? Number(process.env.PORT) : await freePort();
  const [cmd, args] = pinned(detectPinning(), '0', process.execPath, [
    '--import',
    'tsx',
    path.join(root, 'runtime/cli/main.ts'),
    'serve',
  ]);
  const started = await startServer(cmd, args, {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${path.join(TMP, `site-${side}.sqlite`)}`,
      SVC_GENERATED: GENERATED,
      SVC_ROOT: TMP,
      SITE_CONFIG: config,
      ADMIN_PASSWORD: 'bench-admin-pw',
      LOG_LEVEL: 'warn',
    },
    ready: /^serving \d+ DocTypes on /,
    timeoutMs: 300_000,
    label: `serve (${side}, ${mode})`,
  });
  await stopChild(started.child);
  return started.readyMs;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

runMain(async () => {
  if (!existsSync(path.join(GENERATED, 'index.ts')))
    throw new Error(`${GENERATED} is missing: generate the fixture DocTypes first (see bench/run.ts)`);
  mkdirSync(TMP, { recursive: true });
  removeOnExit(TMP);
  const fresh = { A: await start('A', 'fresh'), B: await start('B', 'fresh') };
  console.log(`fresh database (every table made): A ${Math.round(fresh.A)} ms, B ${Math.round(fresh.B)} ms`);
  const times: Record<Mode, Record<Side, number[]>> = {
    auto_migrate: { A: [], B: [] },
    check_only: { A: [], B: [] },
  };
  for (let round = 0; round < ROUNDS; round++)
    for (const side of (round % 2 ? ['B', 'A'] : ['A', 'B']) as Side[])
      for (const mode of ['auto_migrate', 'check_only'] as Mode[])
        times[mode][side].push(await start(side, mode));
  for (const mode of ['auto_migrate', 'check_only'] as Mode[]) {
    const a = median(times[mode].A);
    const b = median(times[mode].B);
    console.log(
      `svc serve start-up, nothing pending, ${mode === 'auto_migrate' ? 'auto_migrate true' : 'auto_migrate false (check only)'}, median of ${ROUNDS}: A ${Math.round(a)} ms, B ${Math.round(b)} ms, B/A ${(b / a).toFixed(2)} (A: ${times[mode].A.map(Math.round).join(', ')}; B: ${times[mode].B.map(Math.round).join(', ')})`,
    );
  }
  return 0;
});
