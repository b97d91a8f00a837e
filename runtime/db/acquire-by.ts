// A wait for a pool's connection that ends at a caller's deadline: the pool's own timeout counts from each wait's
// start, so a call that waited for something else first would otherwise wait a whole acquire timeout more.

/**
 * Waits for `acquire` until `at` (ms since the epoch) at most: past it, rejects with `late()`, and a connection that
 * comes after that goes back through `release`.
 */
export function acquireBy<T>(
  acquire: Promise<T>,
  at: number,
  late: () => Error,
  release: (conn: T) => unknown,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let expired = false;
    const timer = setTimeout(
      () => {
        expired = true;
        reject(late());
      },
      Math.max(0, at - Date.now()),
    );
    acquire.then(
      (conn) => {
        if (!expired) {
          clearTimeout(timer);
          resolve(conn);
        } else void release(conn);
      },
      (err: unknown) => {
        if (expired) return;
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
