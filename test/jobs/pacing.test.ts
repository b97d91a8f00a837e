// Jobs yield to requests (runtime/jobs/pacing.ts): between two batches a job goes on at once while at most one request
// is being handled (a client polling its job), and waits a multiple of the batch's time while the process is busy.
import { trackRequest, yieldToRequests } from '../../runtime/jobs/pacing';

/** Which settles first: the job's yield or a timer of `ms`. */
const race = (ms: number, batchMs: number) =>
  Promise.race([
    yieldToRequests(batchMs).then(() => 'job'),
    new Promise((resolve) => setTimeout(() => resolve('timer'), ms)),
  ]);

test('idle, or one request in flight: no wait; two or more: the job waits 8 times its batch', async () => {
  await new Promise((r) => setTimeout(r, 20));
  expect(await race(30, 20)).toBe('job');
  const release: (() => void)[] = [];
  const hold = () => trackRequest(() => new Promise<void>((resolve) => release.push(resolve)));
  const one = hold();
  expect(await race(30, 20)).toBe('job');
  const two = hold();
  expect(await race(60, 20)).toBe('timer'); // waits 160 ms
  for (const r of release) r();
  await Promise.all([one, two]);
  await new Promise((r) => setTimeout(r, 20));
  expect(await race(30, 20)).toBe('job');
});
