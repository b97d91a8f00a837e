// Server Scripts of type Scheduler Event: saving checks the frequency and cron expression; a tick queues a job for each
// script whose latest occurrence is due (never one before the script existed, never the same occurrence twice, once
// across processes sharing the database); the job runs the current script through the job queue as the user who last
// saved it, with that user's permissions (never as Administrator for a System Manager's script).
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSiteConfig } from '../../runtime/config/config';
import { jobQueueOf, type JobRecord } from '../../runtime/jobs/job-queue';
import { tickScheduler } from '../../runtime/scripts/script-scheduler';
import { cronOf, latestOccurrence } from '../../runtime/scripts/script-schedule';
import type { Site } from '../../runtime/site';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { saveScript } from './script-helpers';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ site: { job_poll_ms: 20 } });
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });
const HOUR = 3_600_000;

/** Saves a Scheduler Event script; returns its name. */
const scheduled = (fields: Record<string, unknown>) =>
  saveScript(t, { script_type: 'Scheduler Event', ...fields });

async function disable(name: string): Promise<void> {
  const res = await t.http.put(`/api/resource/Server Script/${name}`).set(auth()).send({ disabled: 1 });
  expect(res.status).toBe(200);
}

/** Waits until the job has ended; returns it. */
async function ended(site: Site, id: string): Promise<JobRecord> {
  const end = Date.now() + 20_000;
  for (;;) {
    const job = await jobQueueOf(site)!.get(id);
    if (job && (job.status === 'finished' || job.status === 'failed')) return job;
    if (Date.now() > end) throw new Error(`job ${id} is still ${job?.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('schedules', () => {
  test("frequencies map to Frappe's cron expressions; All follows scheduler_interval", () => {
    expect(cronOf('Hourly', undefined, 240)).toBe('0 * * * *');
    expect(cronOf('Daily', undefined, 240)).toBe('0 0 * * *');
    expect(cronOf('Weekly', undefined, 240)).toBe('0 0 * * 0');
    expect(cronOf('Monthly', undefined, 240)).toBe('0 0 1 * *');
    expect(cronOf('Yearly', undefined, 240)).toBe('0 0 1 1 *');
    expect(cronOf('All', undefined, 240)).toBe('*/4 * * * *');
    expect(cronOf('All', undefined, 60)).toBe('*/1 * * * *');
    expect(cronOf('Cron', ' 5 4 * * 1 ', 240)).toBe('5 4 * * 1');
    expect(() => cronOf('Fortnightly', undefined, 240)).toThrow(/Event Frequency must be one of/);
  });

  test('the latest occurrence counts the moment itself, and is read in the time zone', () => {
    const at = Date.parse('2031-03-04T10:00:00Z');
    expect(latestOccurrence('0 * * * *', at, 'UTC')).toBe(at);
    expect(latestOccurrence('0 * * * *', at + 59 * 60_000, 'UTC')).toBe(at);
    expect(latestOccurrence('0 0 * * *', at, 'UTC')).toBe(Date.parse('2031-03-04T00:00:00Z'));
    // Midnight in Kolkata (UTC+5:30) is 18:30 UTC the day before.
    expect(latestOccurrence('0 0 * * *', at, 'Asia/Kolkata')).toBe(Date.parse('2031-03-03T18:30:00Z'));
  });
});

describe('saving a Scheduler Event script', () => {
  let n = 0;
  const refused = async (fields: Record<string, unknown>, message: RegExp) => {
    const before = await t.site.db.knex('tabServer Script').count({ n: '*' }).first();
    const res = await t.http
      .post('/api/resource/Server Script')
      .set(auth())
      .send({ name: `bad-${++n}`, script_type: 'Scheduler Event', script: '1', ...fields });
    expect(res.status).toBe(400);
    // A value outside the Select's options is the generic DataError; every other refusal is a ValidationError.
    expect(['ValidationError', 'DataError']).toContain(res.body.exc_type);
    expect(JSON.stringify(res.body)).toMatch(message);
    expect(await t.site.db.knex('tabServer Script').count({ n: '*' }).first()).toEqual(before);
  };

  test('a frequency is required and must be one of the options', async () => {
    await refused({}, /Event Frequency/);
    await refused({ event_frequency: 'Fortnightly' }, /event_frequency: must be one of/i);
  });

  test('Cron needs a five-field expression that parses', async () => {
    await refused({ event_frequency: 'Cron' }, /Cron Format is mandatory/);
    await refused({ event_frequency: 'Cron', cron_format: '   ' }, /Cron Format is mandatory/);
    await refused({ event_frequency: 'Cron', cron_format: '* * * *' }, /five fields/);
    await refused({ event_frequency: 'Cron', cron_format: '0 * * * * *' }, /five fields/);
    await refused({ event_frequency: 'Cron', cron_format: '@reboot' }, /five fields/);
    await refused({ event_frequency: 'Cron', cron_format: '61 * * * *' }, /not a valid cron/);
    await refused({ event_frequency: 'Cron', cron_format: '* * 32 * *' }, /not a valid cron/);
    await refused({ event_frequency: 'Cron', cron_format: 'a b c d e' }, /not a valid cron/);
    await refused(
      { event_frequency: 'Cron', cron_format: `${'1,'.repeat(200)}1 * * * *` },
      /more than 140 characters/,
    );
  });

  test('only a System Manager may save one', async () => {
    const user = await createUser(t, 'plain@scheduler.test', []);
    const res = await t.http
      .post('/api/resource/Server Script')
      .set('Authorization', user)
      .send({ name: 'not-mine', script_type: 'Scheduler Event', event_frequency: 'Hourly', script: '1' });
    expect(res.status).toBe(403);
  });
});

describe('ticks', () => {
  test('an occurrence runs once, never one before the script existed, and the next one runs again', async () => {
    const name = await scheduled({
      event_frequency: 'Hourly',
      script:
        "frappe.new_doc('ToDo', { description: 'tick ' + frappe.utils.now() }); frappe.response.message = frappe.session.user",
    });
    const row = await t.site.db.knex('tabServer Script').where({ name }).first('creation');
    const created = Date.parse(`${String(row.creation).replace(' ', 'T')}Z`);
    const ours = (ids: string[]) => ids.length;
    // The hour the script was created in started before it: nothing is due yet.
    expect(ours(await tickScheduler(t.site, created))).toBe(0);
    const nextHour = Math.ceil(created / HOUR) * HOUR;
    const jobs = await tickScheduler(t.site, nextHour + 1000);
    expect(jobs).toHaveLength(1);
    const job = await ended(t.site, jobs[0]!);
    expect(job).toMatchObject({ status: 'finished', kind: 'server-script', user: 'Administrator' });
    expect(job.result).toMatchObject({ script: name, occurrence: nextHour, message: 'Administrator' });
    // The same occurrence is never queued twice, at any moment of that hour.
    expect(await tickScheduler(t.site, nextHour + 1000)).toEqual([]);
    expect(await tickScheduler(t.site, nextHour + HOUR - 1)).toEqual([]);
    // The next hour runs again.
    const again = await tickScheduler(t.site, nextHour + HOUR);
    expect(again).toHaveLength(1);
    expect((await ended(t.site, again[0]!)).status).toBe('finished');
    await disable(name);
  });

  test('a Cron script follows its own expression', async () => {
    const name = await scheduled({
      event_frequency: 'Cron',
      cron_format: '*/15 * * * *',
      script: "frappe.response.message = 'q'",
    });
    const base = Date.parse('2033-01-01T10:00:00Z');
    expect(await tickScheduler(t.site, base + 60_000)).toHaveLength(1);
    expect(await tickScheduler(t.site, base + 14 * 60_000)).toHaveLength(0);
    expect(await tickScheduler(t.site, base + 15 * 60_000)).toHaveLength(1);
    await disable(name);
  });

  test('a failing script fails its job with its error; the next occurrence still runs', async () => {
    const name = await scheduled({ event_frequency: 'Daily', script: "frappe.throw('nothing to do')" });
    const day = Date.parse('2034-06-01T00:00:00Z');
    const [id] = await tickScheduler(t.site, day);
    const job = await ended(t.site, id!);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/ValidationError: nothing to do/);
    expect(await tickScheduler(t.site, day + 24 * HOUR)).toHaveLength(1);
    await disable(name);
  });

  test("a System Manager's script runs as that user: it cannot change Administrator; Administrator's can", async () => {
    const sm = await createUser(t, 'sm@scheduler.test', ['System Manager']);
    const script =
      "frappe.db.set_value('User', 'Administrator', 'first_name', 'Mallory'); frappe.response.message = frappe.session.user";
    const res = await t.http
      .post('/api/resource/Server Script')
      .set('Authorization', sm)
      .send({ name: 'sm-weekly', script_type: 'Scheduler Event', event_frequency: 'Weekly', script });
    expect(res.status).toBe(201);
    const firstName = async () =>
      (
        (await t.site.db.knex('tabUser').where('name', 'Administrator').first('first_name')) as {
          first_name: string;
        }
      ).first_name;
    const before = await firstName();
    const week = Date.parse('2035-01-07T00:00:00Z');
    const [id] = await tickScheduler(t.site, week);
    const job = await ended(t.site, id!);
    expect(job).toMatchObject({ status: 'failed', user: 'sm@scheduler.test' });
    expect(job.error).toMatch(/PermissionError/);
    expect(await firstName()).toBe(before);
    await disable('sm-weekly');
    // The same script saved by Administrator runs as Administrator.
    const name = await scheduled({ event_frequency: 'Weekly', script });
    const [adminRun] = await tickScheduler(t.site, week + 7 * 24 * HOUR);
    expect(await ended(t.site, adminRun!)).toMatchObject({
      status: 'finished',
      user: 'Administrator',
      result: { message: 'Administrator' },
    });
    expect(await firstName()).toBe('Mallory');
    await t.http.put('/api/resource/User/Administrator').set(auth()).send({ first_name: before }).expect(200);
    // Saved again by the System Manager after a tick queued it as Administrator: the job runs the new text as its author.
    const edit = await t.http
      .put(`/api/resource/Server Script/${name}`)
      .set('Authorization', sm)
      .send({ script: `${script} // edited` });
    expect(edit.status).toBe(200);
    const queued = await jobQueueOf(t.site)!.enqueue(
      'server-script',
      'Administrator',
      { script: name, occurrence: 0 },
      1,
    );
    const edited = await ended(t.site, queued);
    expect(edited.status).toBe('failed');
    expect(edited.error).toMatch(/PermissionError/);
    expect(await firstName()).toBe(before);
    await disable(name);
  });

  test('a disabled script does not run, and a queued job of a script disabled since is skipped', async () => {
    const name = await scheduled({ event_frequency: 'Monthly', script: "frappe.response.message = 'ran'" });
    await disable(name);
    expect(await tickScheduler(t.site, Date.parse('2036-02-01T00:00:00Z'))).toEqual([]);
    // Queue a job for it by hand, as a tick before the change would have.
    const id = await jobQueueOf(t.site)!.enqueue(
      'server-script',
      'Administrator',
      { script: name, occurrence: 0 },
      1,
    );
    expect((await ended(t.site, id)).result).toMatchObject({ skipped: expect.any(String) });
  });

  test('server_script_enabled: false queues nothing', async () => {
    const off = await createTestSite({ site: { server_script_enabled: false } });
    try {
      await off.site.db.knex('tabServer Script').insert({
        name: 'off-1',
        script_type: 'Scheduler Event',
        event_frequency: 'Hourly',
        script: "frappe.response.message = 'ran'",
        creation: '2000-01-01 00:00:00',
        modified: '2000-01-01 00:00:00',
        owner: 'Administrator',
        modified_by: 'Administrator',
        docstatus: 0,
        idx: 0,
      });
      expect(await tickScheduler(off.site, Date.now())).toEqual([]);
    } finally {
      await off.close();
    }
  });
});

describe('several processes', () => {
  /** Starts a process that opens the site (no worker of its own) and ticks at each moment given; resolves its job ids. */
  function ticker(moments: number[]): Promise<string[]> {
    return new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          path.join(__dirname, 'scheduler-child.ts'),
          t.site.config.databaseUrl,
          moments.join(','),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.on('error', reject);
      child.on('exit', (code) =>
        code === 0
          ? resolve(JSON.parse(out) as string[])
          : reject(new Error(`ticker exited with ${code}: ${out}`)),
      );
    });
  }

  test('three processes ticking through the same moments queue one job per occurrence', async () => {
    const name = await scheduled({
      event_frequency: 'Cron',
      cron_format: '* * * * *',
      script: "frappe.response.message = 'once'",
    });
    const base = Date.parse('2037-01-01T00:00:00Z');
    // Twenty minutes, each ticked twice (at the minute and 30 s later) by each of three processes at once.
    const moments = Array.from({ length: 20 }, (_, i) => [
      base + i * 60_000,
      base + i * 60_000 + 30_000,
    ]).flat();
    const queued = (await Promise.all([ticker(moments), ticker(moments), ticker(moments)])).flat();
    expect(queued).toHaveLength(20);
    const jobs = await Promise.all(queued.map((id) => ended(t.site, id)));
    const occurrences = jobs
      .map((job) => (job.result as { occurrence: number }).occurrence)
      .sort((a, b) => a - b);
    expect(occurrences).toEqual(Array.from({ length: 20 }, (_, i) => base + i * 60_000));
    expect(jobs.every((job) => job.status === 'finished')).toBe(true);
    await disable(name);
  }, 60_000);
});

describe('site config time_zone', () => {
  const write = (body: unknown): string => {
    const file = path.join(
      os.tmpdir(),
      `site-config-${process.pid}-${Math.random().toString(36).slice(2)}.json`,
    );
    writeFileSync(file, JSON.stringify(body));
    return file;
  };

  test('an IANA zone is taken; anything else stops the start with a clear message', () => {
    expect(loadSiteConfig(write({ time_zone: 'Asia/Kolkata' }), true).time_zone).toBe('Asia/Kolkata');
    for (const bad of ['Mars/Olympus', '', 5, '../../etc/passwd'])
      expect(() => loadSiteConfig(write({ time_zone: bad }), true)).toThrow(
        /time_zone must be an IANA time zone/,
      );
  });
});
