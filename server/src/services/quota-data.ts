// Dashboard aggregation (facts §5.8): per (user, username, model, hour) buckets in memory, added to quota_data every
// DataExportInterval minutes and on shutdown (select-then-increment-or-insert, like new-api).
import type { AppContext } from '../context.js';

interface Bucket {
  userId: number;
  username: string;
  model: string;
  hour: number;
  count: number;
  quota: number;
  tokenUsed: number;
}

export class QuotaData {
  private buckets = new Map<string, Bucket>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | null = null;

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
    const hour = Math.floor(at / 3_600_000) * 3600;
    const k = `${userId}\u0000${username}\u0000${model}\u0000${hour}`;
    const b = this.buckets.get(k);
    if (b) {
      b.count++;
      b.quota += quota;
      b.tokenUsed += tokens;
    } else this.buckets.set(k, { userId, username, model, hour, count: 1, quota, tokenUsed: tokens });
  }

  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (!this.buckets.size) return;
    const list = [...this.buckets.values()];
    this.buckets = new Map();
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
              .values({ user_id: b.userId, username: b.username, model_name: b.model, created_at: b.hour, count: b.count, quota: b.quota, token_used: b.tokenUsed })
              .execute();
          }
        } catch (err) {
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
