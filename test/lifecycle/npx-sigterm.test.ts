// `npx svc serve` stopped by a SIGTERM to npx: npm passes the signal to the shell it started, not to the server, which
// must notice its parent is gone and shut down instead of serving on as an orphan (issue 36, item 15).
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { waitForPort } from '../helpers/private-mariadb';

const ROOT = path.resolve(__dirname, '../..');
// Ports of its own: redis-subscription.test.ts's private Redis listens on 4723 and 4724.
const PORT = process.env.TEST_MYSQL_URL ? 4733 : 4732;
jest.setTimeout(120_000);

/** Whether something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The processes below `root` (Linux /proc), so that none outlives the test whatever it finds. */
function descendants(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid …": comm may hold spaces, so read after its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  for (let frontier = [root]; frontier.length;) {
    const next = [...parents].filter(([, ppid]) => frontier.includes(ppid)).map(([pid]) => pid);
    found.push(...next);
    frontier = next;
  }
  return found;
}

test('SIGTERM to npx stops the server it started', async () => {
  const dir = path.join(ROOT, 'test/tmp', `npx-sigterm-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'site_config.json'), JSON.stringify({ shutdown_timeout: 3000 }));
  const npx = spawn('npx', ['--no-install', 'svc', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(PORT),
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${path.join(dir, 'site.sqlite')}`,
      SITE_CONFIG: path.join(dir, 'site_config.json'),
      ADMIN_PASSWORD: 'npx-admin-1',
      LOG_LEVEL: 'warn',
      JEST_WORKER_ID: '',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let below: number[] = [];
  try {
    await waitForPort(PORT, 90_000);
    below = descendants(npx.pid!);
    expect(below.length).toBeGreaterThan(0);
    npx.kill('SIGTERM');
    const end = Date.now() + 10_000;
    while ((await listening(PORT)) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    expect(await listening(PORT)).toBe(false);
  } finally {
    npx.kill('SIGKILL');
    for (const pid of below) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
