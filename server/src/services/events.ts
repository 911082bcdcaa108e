// Cache invalidation. Whoever writes a user, token, channel or option publishes a change; the caches subscribe.
// With Redis configured, changes also travel over a pub/sub channel so every node drops its stale copies.
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';

export type ChangeEvent =
  | { kind: 'channels' } // any channel or ability row changed
  | { kind: 'user'; id: number } // a user row changed (quota edits by admins, status, role, group, deletion)
  | { kind: 'token'; id?: number; key?: string; userId?: number } // a token row changed or was deleted
  | { kind: 'options' }
  | { kind: 'limits' } // a token's or user's usage limits (services/limits/)
  | { kind: 'subscriptions' }; // a subscription plan or its windows (services/subscriptions/plans.ts)

export class ChangeBus {
  private readonly emitter = new EventEmitter();
  private readonly origin = Math.random().toString(36).slice(2);
  private sub: Redis | null = null;

  constructor(
    private readonly redis: Redis | null,
    private readonly channel: string,
  ) {
    this.emitter.setMaxListeners(100);
  }

  async start(): Promise<void> {
    if (!this.redis) return;
    this.sub = this.redis.duplicate();
    // the same outage as the main client's, which reports it (context.ts); ioredis subscribes again on reconnection
    this.sub.on('error', () => undefined);
    await this.sub.subscribe(this.channel);
    this.sub.on('message', (_ch: string, msg: string) => {
      try {
        const { origin, ev } = JSON.parse(msg) as { origin: string; ev: ChangeEvent };
        if (origin !== this.origin) this.emitter.emit('change', ev);
      } catch {
        /* ignore malformed messages */
      }
    });
  }

  async stop(): Promise<void> {
    if (this.sub) await this.sub.quit().catch(() => this.sub?.disconnect());
    this.sub = null;
  }

  publish(ev: ChangeEvent): void {
    this.emitter.emit('change', ev);
    if (this.redis)
      void this.redis.publish(this.channel, JSON.stringify({ origin: this.origin, ev })).catch(() => undefined);
  }

  /**
   * publish(), resolved once the local subscribers' work for the change is done (the promise a subscriber returns, e.g.
   * the token cache deleting the Redis entry every node reads) and the change is on the Redis channel. A console write
   * that awaits it answers only when the other nodes' next request sees the change, not a cached copy from before.
   */
  async publishSettled(ev: ChangeEvent): Promise<void> {
    const work = this.emitter.listeners('change').map((fn) => (fn as (ev: ChangeEvent) => unknown)(ev));
    const sent = this.redis?.publish(this.channel, JSON.stringify({ origin: this.origin, ev })).catch(() => undefined);
    await Promise.allSettled([...work, sent]);
  }

  /** `fn` may return a promise: publishSettled waits for it. */
  subscribe(fn: (ev: ChangeEvent) => unknown): () => void {
    this.emitter.on('change', fn);
    return () => this.emitter.off('change', fn);
  }
}
