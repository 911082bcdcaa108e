// Dashboard aggregation (new-api-compat.md §5.8): per (user, username, model, hour) buckets in memory, added to
// quota_data every DataExportInterval minutes and on shutdown (select-then-increment-or-insert, like new-api). Unlike
// new-api, the dashboard also shows the buckets not flushed yet (withUnflushed), so it does not lag by up to that
// interval, and a bucket whose write failed is kept for the next flush instead of being dropped.
import type { AppContext } from '../context.js';

const QUOTA_DATA_MODEL_MAX = 64;

export interface UsageBucket {
  userId: number;
  username: string;
  model: string;
  hour: number;
  count: number;
  quota: number;
  tokenUsed: number;
}

export class QuotaData {
  private buckets = new Map<string, UsageBucket>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | null = null;
  /** flushes started so far (see withUnflushed) */
  private flushes = 0;

  constructor(private readonly ctx: AppContext) {}

  start(): void {
    const schedule = () => {
      const minutes = Math.max(1, this.ctx.options.num('DataExportInterval', 5));
      this.timer = setTimeout(() => {
        void this.flush().finally(schedule);
      }, minutes * 60_000);
      this.timer.unref();
    };
    schedule();
  }

  record(userId: number, username: string, model: string, quota: number, tokens: number, at = Date.now()): void {
    if (!this.ctx.options.bool('DataExportEnabled')) return;
    // quota_data.model_name is VARCHAR(64) (new-api's size): a longer name would fail its bucket's write at every flush
    if (model.length > QUOTA_DATA_MODEL_MAX) model = model.slice(0, QUOTA_DATA_MODEL_MAX);
    this.add({ userId, username, model, hour: Math.floor(at / 3_600_000) * 3600, count: 1, quota, tokenUsed: tokens });
  }

  private add(n: UsageBucket): void {
    const k = `${n.userId}\u0000${n.username}\u0000${n.model}\u0000${n.hour}`;
    const b = this.buckets.get(k);
    if (b) {
      b.count += n.count;
      b.quota += n.quota;
      b.tokenUsed += n.tokenUsed;
    } else this.buckets.set(k, { ...n });
  }

  /**
   * `read`'s rows of quota_data and the buckets not in them yet, combined by `merge`. Reads while no flush runs, and
   * again if one started meanwhile (its buckets may be half written), so a bucket is neither missed nor counted twice.
   */
  async withUnflushed<T>(read: () => Promise<T>, merge: (rows: T, unflushed: UsageBucket[]) => T): Promise<T> {
    for (let tries = 1; ; tries++) {
      while (this.flushing) await this.flushing;
      const flushes = this.flushes;
      const rows = await read();
      if (flushes === this.flushes || tries >= 3) return merge(rows, [...this.buckets.values()]);
    }
  }

  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (!this.buckets.size) return;
    const list = [...this.buckets.values()];
    this.buckets = new Map();
    this.flushes++;
    this.flushing = (async () => {
      const db = this.ctx.db;
      for (const b of list) {
        try {
          const row = await db
            .selectFrom('quota_data')
            .select('id')
            .where('user_id', '=', b.userId)
            .where('username', '=', b.username)
            .where('model_name', '=', b.model)
            .where('created_at', '=', b.hour)
            .executeTakeFirst();
          if (row) {
            await db
              .updateTable('quota_data')
              .set((eb) => ({
                count: eb('count', '+', b.count),
                quota: eb('quota', '+', b.quota),
                token_used: eb('token_used', '+', b.tokenUsed),
              }))
              .where('id', '=', row.id)
              .execute();
          } else {
            await db
              .insertInto('quota_data')
              .values({
                user_id: b.userId,
                username: b.username,
                model_name: b.model,
                created_at: b.hour,
                count: b.count,
                quota: b.quota,
                token_used: b.tokenUsed,
              })
              .execute();
          }
        } catch (err) {
          // kept for the next flush (and still shown by withUnflushed)
          this.add(b);
          this.ctx.log.error({ err }, 'quota_data flush failed');
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
    if (this.timer) clearTimeout(this.timer);
    await this.flush();
  }
}
