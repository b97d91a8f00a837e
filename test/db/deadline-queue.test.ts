// The queue of the group commits' waiting works: in order, each answered with the late error at its deadline while it
// still waits, by one timer, even when nothing else happens; works put back first keep their deadlines. The clock is
// jest's (timers and Date.now), so a loaded machine cannot move a deadline past the test's next look.
import { DeadlineQueue } from '../../runtime/db/deadline-queue';

interface Item {
  id: string;
  at: number;
  reject(err: unknown): void;
}

const late = () => Object.assign(new Error('late'), { code: 'LATE' });

function item(id: string, inMs: number, answers: Map<string, number>): Item {
  const asked = Date.now();
  return { id, at: asked + inMs, reject: () => answers.set(id, Date.now() - asked) };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

it('answers each waiting work at its deadline, not before, and keeps the rest in order', () => {
  const queue = new DeadlineQueue<Item>(late);
  const answers = new Map<string, number>();
  queue.push(item('slow', 400, answers));
  queue.push(item('fast', 60, answers));
  queue.push(item('mid', 150, answers));
  jest.advanceTimersByTime(59);
  expect(answers.size).toBe(0);
  jest.advanceTimersByTime(41);
  expect([...answers.entries()]).toEqual([['fast', 60]]);
  expect(queue.length).toBe(2);
  jest.advanceTimersByTime(49);
  expect(answers.has('mid')).toBe(false);
  jest.advanceTimersByTime(71);
  expect([...answers.entries()]).toEqual([
    ['fast', 60],
    ['mid', 150],
  ]);
  expect(queue.shift()?.id).toBe('slow');
  jest.advanceTimersByTime(250);
  // Taken from the queue before its deadline: the queue no longer answers it.
  expect(answers.has('slow')).toBe(false);
});

it('answers a work taken after its deadline, and not one taken before', () => {
  const queue = new DeadlineQueue<Item>(late);
  const answers = new Map<string, number>();
  const early = item('early', 1000, answers);
  const past = { ...item('past', 0, answers), at: Date.now() - 1 };
  expect(queue.answeredLate(early)).toBe(false);
  expect(queue.answeredLate(past)).toBe(true);
  expect([...answers.keys()]).toEqual(['past']);
});

it('puts works back first, with their deadlines, and arms the timer for them', () => {
  const queue = new DeadlineQueue<Item>(late);
  const answers = new Map<string, number>();
  queue.push(item('queued', 1000, answers));
  const back = [item('back1', 50, answers), item('back2', 1000, answers)];
  queue.unshift(back);
  expect(queue.peek()?.id).toBe('back1');
  jest.advanceTimersByTime(49);
  expect(answers.size).toBe(0);
  jest.advanceTimersByTime(1);
  expect([...answers.keys()]).toEqual(['back1']);
  expect(queue.drain().map((i) => i.id)).toEqual(['back2', 'queued']);
  expect(queue.length).toBe(0);
});
