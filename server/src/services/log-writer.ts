// Batched inserts into the logs table (ctx.logDb), off the request path: rows queue in memory and are written every
// ~1 s or every BATCH_ROWS rows, and once more on shutdown (ctx.onClose), so a request never waits on the log DB.
import { CompiledQuery } from 'kysely';
import type BetterSqlite3 from 'better-sqlite3';
import type { AppContext } from '../context.js';
import { sqliteHandle } from '../db/connect.js';
import type { NewLog } from '../db/schema.js';

// Hand-built multi-row INSERT: Kysely's builder spends noticeable CPU compiling 200-row value lists.
const COLUMNS = [
  ['user_id', 0],
  ['created_at', 0],
  ['type', 0],
  ['content', ''],
  ['username', ''],
  ['token_name', ''],
  ['model_name', ''],
  ['quota', 0],
  ['prompt_tokens', 0],
  ['completion_tokens', 0],
  ['use_time', 0],
  ['is_stream', false],
  ['channel_id', 0],
  ['token_id', 0],
  ['group', ''],
  ['other', ''],
] as const;

function insertQuery(kind: string, rows: NewLog[]): CompiledQuery {
  const q = kind === 'mysql' ? '`' : '"';
  const cols = COLUMNS.map(([c]) => `${q}${c}${q}`).join(', ');
  const params: unknown[] = [];
  const tuples: string[] = [];
  let n = 0;
  for (const row of rows) {
    const ph: string[] = [];
    for (const [c, def] of COLUMNS) {
      let v = (row as Record<string, unknown>)[c] ?? def;
      if (c === 'is_stream' && kind !== 'postgres') v = v ? 1 : 0;
      params.push(v);
      ph.push(kind === 'postgres' ? `$${++n}` : '?');
    }
    tuples.push(`(${ph.join(', ')})`);
  }
  return CompiledQuery.raw(`INSERT INTO ${q}logs${q} (${cols}) VALUES ${tuples.join(', ')}`, params);
}

/** SQLite: one prepared multi-row INSERT per chunk size, run synchronously with flat parameters (no Kysely). */
class SqliteInsert {
  private readonly stmts = new Map<number, BetterSqlite3.Statement>();
  constructor(private readonly handle: BetterSqlite3.Database) {}

  get usable(): boolean {
    return this.handle.open && !this.handle.inTransaction;
  }

  run(rows: NewLog[]): void {
    let st = this.stmts.get(rows.length);
    if (!st) {
      st = this.handle.prepare(insertQuery('sqlite', rows).sql);
      this.stmts.set(rows.length, st);
    }
    const params: unknown[] = new Array(rows.length * COLUMNS.length);
    let n = 0;
    for (const row of rows) {
      const r = row as Record<string, unknown>;
      for (const [c, def] of COLUMNS) {
        const v = r[c] ?? def;
        params[n++] = typeof v === 'boolean' ? (v ? 1 : 0) : v;
      }
    }
    st.run(params);
  }
}

const FLUSH_MS = 1000;
const BATCH_ROWS = 200;
/** rows per INSERT: each statement blocks the event loop (SQLite is synchronous), so keep them short and yield between */
const CHUNK_ROWS = 50;
const MAX_QUEUE = 100_000;

export class LogWriter {
  private queue: NewLog[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | null = null;

  private readonly fast: SqliteInsert | null;

  constructor(private readonly ctx: AppContext) {
    const handle = ctx.logDbKind === 'sqlite' ? sqliteHandle(ctx.logDb) : undefined;
    this.fast = handle ? new SqliteInsert(handle) : null;
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  add(row: NewLog): void {
    if (this.queue.length >= MAX_QUEUE) {
      this.ctx.log.error('log queue full, dropping a log row');
      return;
    }
    this.queue.push(row);
    if (this.queue.length >= BATCH_ROWS) void this.flush();
  }

  /** Writes everything queued so far; concurrent calls wait for the same write. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (!this.queue.length) return;
    const rows = this.queue;
    this.queue = [];
    this.flushing = (async () => {
      for (let i = 0; i < rows.length; i += CHUNK_ROWS) {
        if (i) await new Promise((r) => setImmediate(r));
        const chunk = rows.slice(i, i + CHUNK_ROWS);
        try {
          if (this.fast?.usable) this.fast.run(chunk);
          else await this.ctx.logDb.executeQuery(insertQuery(this.ctx.logDbKind, chunk));
        } catch (err) {
          this.ctx.log.error({ err, rows: chunk.length }, 'writing logs failed');
        }
      }
    })();
    try {
      await this.flushing;
    } finally {
      this.flushing = null;
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}
