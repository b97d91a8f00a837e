// Jobs yield to requests (runtime/jobs/pacing.ts): between two batches a job goes on at once while at most one request
// is being handled or requests come slowly (a client polling its job), and waits a multiple of the batch's time while
// two are in flight or requests arrive at 100 a second or more.
import { requestPacer, trackRequest } from '../../runtime/jobs/pacing';

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Which settles first: the job's yield or a timer of `ms`. */
const race = (pace: (batchMs: number) => Promise<void>, ms: number, batchMs: number) =>
  Promise.race([pace(batchMs).then(() => 'job'), wait(ms).then(() => 'timer')]);

/** A request that is handled until its `end()` is called. */
function request(): { end(): void; done: Promise<unknown> } {
  let end = () => {};
  const done = trackRequest(() => new Promise<void>((resolve) => (end = resolve)));
  return { end, done };
}

/** A request that starts and ends at once. */
const quick = () => trackRequest(() => Promise.resolve());

test('idle, or one request in flight: no wait; two or more: the job waits 8 times its batch', async () => {
  const pace = requestPacer();
  await wait(20);
  expect(await race(pace, 30, 20)).toBe('job');
  const one = request();
  expect(await race(pace, 30, 20)).toBe('job');
  const two = request();
  expect(await race(pace, 60, 20)).toBe('timer'); // waits 160 ms
  one.end();
  two.end();
  await Promise.all([one.done, two.done]);
  await wait(200);
  expect(await race(pace, 30, 20)).toBe('job');
});

test('a client polling every 50 ms never makes the job wait, even right after a poll', async () => {
  const pace = requestPacer();
  for (let i = 0; i < 4; i++) {
    await wait(50);
    await quick();
    expect(await race(pace, 30, 20)).toBe('job');
  }
});

test('requests arriving fast since the last batch make the job wait, also when none is in flight at that moment', async () => {
  // The pacer's clock (Date.now) is jest's, timers are real: 5 requests in 10 ms is 500 a second however long a loaded
  // machine takes between the two batches.
  jest.useFakeTimers({
    doNotFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate'],
  });
  try {
    const pace = requestPacer();
    jest.advanceTimersByTime(10);
    for (let i = 0; i < 5; i++) await quick();
    expect(await race(pace, 60, 20)).toBe('timer');
    // Counted once: the batch after that sees none.
    jest.advanceTimersByTime(200);
    expect(await race(pace, 30, 20)).toBe('job');
  } finally {
    jest.useRealTimers();
  }
});
