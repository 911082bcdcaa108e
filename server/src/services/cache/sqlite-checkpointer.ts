// SQLite WAL checkpoints off the main thread. With synchronous=NORMAL a checkpoint fsyncs, and SQLite's automatic
// checkpoint runs inside whichever statement crosses the threshold — on the relay's event loop, where it stalled
// requests for milliseconds. A worker thread with its own connection checkpoints (PASSIVE) twice a second; the main
// connection keeps an automatic checkpoint only as a safety net at a much higher threshold.
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import type { AppContext } from '../../context.js';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.path, { timeout: 5000 });
const timer = setInterval(() => { try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} }, workerData.intervalMs);
parentPort.on('message', (m) => { if (m === 'stop') { clearInterval(timer); try { db.pragma('wal_checkpoint(PASSIVE)'); db.close(); } catch {} parentPort.close(); } });
`;

export async function startSqliteCheckpointer(ctx: AppContext): Promise<void> {
  if (ctx.dbKind !== 'sqlite' || ctx.config.sqlitePath === ':memory:') return;
  let worker: Worker;
  try {
    const { createRequire } = await import('node:module');
    const modulePath = createRequire(import.meta.url).resolve('better-sqlite3');
    worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { module: modulePath, path: ctx.config.sqlitePath, intervalMs: 500 } });
  } catch (err) {
    ctx.log.warn({ err }, 'sqlite checkpointer not started');
    return;
  }
  worker.unref();
  worker.on('error', (err) => ctx.log.warn({ err }, 'sqlite checkpointer failed'));
  // 10000 pages ≈ 40 MB: only reached if the worker falls behind
  await sql`PRAGMA wal_autocheckpoint = 10000`.execute(ctx.db).catch(() => undefined);
  ctx.onClose(async () => {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 2000);
      worker.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      worker.postMessage('stop');
    });
  });
}
