// The in-flight list of the shutdown: responses leave it when they close, in any order, and only once.
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { InFlightResponses } from '../../runtime/lifecycle/in-flight';

const response = (): ServerResponse => new EventEmitter() as unknown as ServerResponse;

test('a response is in flight from add until its close, whatever order they close in', () => {
  const inFlight = new InFlightResponses();
  const [a, b, c, d] = [response(), response(), response(), response()];
  for (const res of [a, b, c, d]) inFlight.add(res);
  expect(inFlight.size).toBe(4);
  b.emit('close');
  expect(new Set(inFlight.snapshot())).toEqual(new Set([a, c, d]));
  d.emit('close');
  a.emit('close');
  expect(inFlight.snapshot()).toEqual([c]);
  // A second close (or one after the list moved on) removes nothing else.
  a.emit('close');
  expect(inFlight.snapshot()).toEqual([c]);
  const e = response();
  inFlight.add(e);
  c.emit('close');
  expect(inFlight.snapshot()).toEqual([e]);
  e.emit('close');
  expect(inFlight.size).toBe(0);
});

test('the snapshot is a copy: closing while iterating it skips no one', () => {
  const inFlight = new InFlightResponses();
  const all = [response(), response(), response()];
  for (const res of all) inFlight.add(res);
  const seen: ServerResponse[] = [];
  for (const res of inFlight.snapshot()) {
    seen.push(res);
    (res as unknown as EventEmitter).emit('close');
  }
  expect(seen).toEqual(all);
  expect(inFlight.size).toBe(0);
});
