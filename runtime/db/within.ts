// A promise with a time limit, for waits on a database that may never answer (a frozen server, a lost replica).

/** `promise`, or a rejection with `late()`'s error once `ms` have passed (`late` may also clean up). */
export function within<T>(promise: Promise<T>, ms: number, late: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(late()), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
