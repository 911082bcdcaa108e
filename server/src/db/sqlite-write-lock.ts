// One writer at a time on a SQLite file shared by the main thread and its writer worker (services/sqlite-worker.ts),
// decided in shared memory before SQLite is asked.
//
// Why not SQLite's own locking: a connection that finds the file locked sleeps in SQLite's busy handler (1 ms, then
// longer) — on the main thread that blocks every request for that long. And a deferred transaction that has read
// before writing fails outright (SQLITE_BUSY_SNAPSHOT) if the other connection committed in between, which Kysely
// transactions spanning awaits would hit. The relay's writes use tryAcquire(): when the worker holds the lock they
// raise `waiting` (the worker commits after its current row) and retry once released() says the worker let go, so the
// main thread never blocks on the worker; other writes (console, refunds) wait for it with acquire(), at most a row
// and a commit. The worker gives way to a waiting main thread, but only for a short while: the flag is a request, not
// a lock.
//
// Layout of the shared Int32Array: [0] owner (0 free, 1 main thread, 2 worker), [1] main thread waiting (0/1).
// The worker side of the protocol is in services/sqlite-worker-thread.ts.
import type BetterSqlite3 from 'better-sqlite3';

export const OWNER_FREE = 0;
export const OWNER_MAIN = 1;
export const OWNER_WORKER = 2;

/** after this long the worker is presumed stuck: the main thread writes anyway (SQLite still serialises writers) */
const STALL_MS = 3000;

export class SqliteWriteLock {
  readonly buffer = new SharedArrayBuffer(8);
  private readonly a = new Int32Array(this.buffer);
  /** nesting on the main thread (a Kysely transaction around a statement that takes the lock itself) */
  private depth = 0;
  /** the lock was not really taken (stalled worker): release must not free the worker's ownership */
  private forced = false;
  /** tryAcquire() raised `waiting` and has not got the lock yet (since askedAt) */
  private asked = false;
  private askedAt = 0;

  acquire(): void {
    if (this.depth++ > 0) return;
    const a = this.a;
    if (Atomics.compareExchange(a, 0, OWNER_FREE, OWNER_MAIN) === OWNER_FREE) return;
    Atomics.store(a, 1, 1);
    const deadline = Date.now() + STALL_MS;
    while (Atomics.compareExchange(a, 0, OWNER_FREE, OWNER_MAIN) !== OWNER_FREE) {
      if (Date.now() > deadline) {
        this.forced = true;
        break;
      }
      Atomics.wait(a, 0, OWNER_WORKER, 5);
    }
    this.asked = false;
    Atomics.store(a, 1, 0);
    Atomics.notify(a, 1);
  }

  /**
   * Takes the lock if it is free, without waiting; otherwise asks the worker to commit early and returns false (the
   * caller tries again once released() settles, doing other work meanwhile). Pairs with release().
   */
  tryAcquire(): boolean {
    if (this.depth > 0) {
      this.depth++;
      return true;
    }
    const a = this.a;
    if (Atomics.compareExchange(a, 0, OWNER_FREE, OWNER_MAIN) === OWNER_FREE) {
      this.depth = 1;
      if (this.asked) this.stopAsking();
      return true;
    }
    const now = Date.now();
    if (!this.asked) {
      this.asked = true;
      this.askedAt = now;
      Atomics.store(a, 1, 1);
    } else if (now - this.askedAt > STALL_MS) {
      // the worker has held the lock for seconds: presumed stuck, write anyway (as acquire() does)
      this.stopAsking();
      this.forced = true;
      this.depth = 1;
      return true;
    }
    return false;
  }

  /**
   * Settles once the worker has let go of the lock (at once if it does not hold it), for a caller whose tryAcquire()
   * failed; the event loop goes on with other work or sleeps meanwhile. Retrying on every turn (setImmediate) instead
   * failed about twice per request under load, each failure a turn of the event loop spent on nothing.
   */
  released(): Promise<unknown> {
    const r = Atomics.waitAsync(this.a, 0, OWNER_WORKER, STALL_MS);
    return r.async ? r.value : Promise.resolve();
  }

  /** the caller that asked no longer needs the lock (nothing left to write) */
  stopAsking(): void {
    if (!this.asked) return;
    this.asked = false;
    Atomics.store(this.a, 1, 0);
    Atomics.notify(this.a, 1);
  }

  release(): void {
    if (this.depth === 0 || --this.depth > 0) return;
    if (this.forced) {
      this.forced = false;
      return;
    }
    Atomics.store(this.a, 0, OWNER_FREE);
    Atomics.notify(this.a, 0);
  }

  hold<T>(fn: () => T): T {
    this.acquire();
    try {
      return fn();
    } finally {
      this.release();
    }
  }

  /** the worker died: whatever it held is free again */
  workerGone(): void {
    if (Atomics.compareExchange(this.a, 0, OWNER_WORKER, OWNER_FREE) === OWNER_WORKER) Atomics.notify(this.a, 0);
  }
}

const locks = new WeakMap<BetterSqlite3.Database, SqliteWriteLock>();

/** The lock of a connection, created on first use; until a worker shares it, taking it is two atomic operations. */
export function writeLockOf(handle: BetterSqlite3.Database): SqliteWriteLock {
  let lock = locks.get(handle);
  if (!lock) {
    lock = new SqliteWriteLock();
    locks.set(handle, lock);
  }
  return lock;
}
