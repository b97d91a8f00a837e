// Generation time of the 768 fixture DocTypes (../shared/fixtures), A/B: two checkouts (ROOT_A, ROOT_B: folders of
// this repo with node_modules; default both this one) each run `npm run generate`'s command on the fixtures into a fresh
// output folder of their own, one after the other, in both orders (A B, B A, A B, ...), so that both see the same
// machine. Each run is timed from spawn to exit (wall) and by the CPU time of the generator process and its threads
// (user + system, from this process's reaped-children counters: esbuild's own service process is not in it).
//   npx tsx bench/generate-ab.ts         GEN_ROUNDS (default 3: each side runs 3 times)
//   ROOT_A=/work/main npx tsx bench/generate-ab.ts
//   GEN_COLD=1                           empty each side's validator cache before each run (generator/validator-cache.ts;
//                                        otherwise a side's first run fills it and its later runs reuse it)
// Prints each run and the medians with B/A; issue #36 item 20's target is under 8 s for 913 DocTypes.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { childrenCpuMs, runMain, runToEnd } from './lib/procs';

const ROOT = path.join(__dirname, '..');
const ROUNDS = Math.max(1, Number(process.env.GEN_ROUNDS ?? 3));
const FIXTURES = path.resolve(ROOT, '..', 'shared', 'fixtures');
const SETS = ['frappe-v15', 'erpnext-v15'].map((set) => path.join(FIXTURES, set));

interface Run {
  side: 'A' | 'B';
  wallMs: number;
  cpuMs: number;
  summary: string;
}

/** The node flags of a checkout's `npm run generate` (`node <flags> --import tsx generator/cli.ts`), but the loader. */
function nodeFlags(root: string): string[] {
  const { scripts } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const words = (scripts.generate ?? '').split(/\s+/);
  const flags = words.slice(1, words.indexOf('generator/cli.ts'));
  return flags.filter((flag, i) => flag !== '--import' && flags[i - 1] !== '--import');
}

async function generate(side: 'A' | 'B'): Promise<Run> {
  const root = path.resolve(process.env[`ROOT_${side}`] ?? ROOT);
  const out = path.join(root, 'bench', 'tmp', `generate-ab-${process.pid}`);
  if (!existsSync(path.join(root, 'node_modules'))) throw new Error(`${root} has no node_modules`);
  rmSync(out, { recursive: true, force: true });
  if (process.env.GEN_COLD === '1')
    rmSync(path.join(root, 'node_modules', '.cache', 'doctype-service', 'validators'), {
      recursive: true,
      force: true,
    });
  const cpuBefore = childrenCpuMs();
  const args = [path.join(root, 'generator', 'cli.ts'), '--doctypes', ...SETS, '--out', out, '--quiet'];
  // Each side through its own tsx (its loader, as `tsx generator/cli.ts` registers it), from this folder, with the node
  // flags of its own `npm run generate`.
  const tsx = pathToFileURL(require.resolve('tsx', { paths: [root] })).href;
  const run = await runToEnd(process.execPath, [...nodeFlags(root), '--import', tsx, ...args], {
    timeoutMs: 600_000,
    label: `generate (${side})`,
  });
  rmSync(out, { recursive: true, force: true });
  if (run.code !== 0)
    throw new Error(`${side}: the generator exited ${run.code}:\n${run.stderr.slice(-3000)}`);
  const summary = /generated \d+ DocTypes.*$/m.exec(run.stdout)?.[0] ?? '';
  return { side, wallMs: run.ms, cpuMs: childrenCpuMs() - cpuBefore, summary };
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<number> {
  if (!SETS.every((set) => existsSync(set))) {
    console.log(`${FIXTURES} is absent: nothing to measure`);
    return 1;
  }
  console.log(
    `A: ${path.resolve(process.env.ROOT_A ?? ROOT)}\nB: ${path.resolve(process.env.ROOT_B ?? ROOT)}`,
  );
  const runs: Run[] = [];
  for (let round = 0; round < ROUNDS; round++)
    for (const side of round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      const run = await generate(side);
      runs.push(run);
      console.log(
        `round ${round + 1} ${side}: ${seconds(run.wallMs)} wall, ${seconds(run.cpuMs)} CPU  ${run.summary}`,
      );
    }
  const of = (side: 'A' | 'B', key: 'wallMs' | 'cpuMs') =>
    median(runs.filter((r) => r.side === side).map((r) => r[key]));
  for (const key of ['wallMs', 'cpuMs'] as const)
    console.log(
      `median ${key === 'wallMs' ? 'wall' : 'CPU '}: A ${seconds(of('A', key))}, B ${seconds(of('B', key))}, ` +
        `B/A ${(of('B', key) / of('A', key)).toFixed(2)}`,
    );
  return 0;
}

runMain(main);
