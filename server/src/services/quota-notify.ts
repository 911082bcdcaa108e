// Low-balance notice (new-api-compat.md §5.9): after a charge leaves a user below their warning threshold (user setting
// quota_warning_threshold, else the QuotaRemindThreshold option), send "额度即将用尽" by email (SMTP options;
// notification_email or the account email) or by webhook (POST JSON signed with X-Webhook-Signature = hex
// HMAC-SHA256(webhook_secret, body)). At most one notice per user every 2 hours (spec §9; new-api allows 2 per
// clock hour), counted in Redis when configured so several nodes share the limit. Never blocks or fails a request.
// With root's worker (WorkerUrl) the webhook goes through it, as new-api sends it (lib/safe-fetch.ts).
// The same delivery tells the root user of automatic channel disables and enables (notifyRoot, new-api-compat.md §4.9).
import { createHmac } from 'node:crypto';
import type { AppContext } from '../context.js';
import { userUrlFetch, type SafeFetch } from '../lib/safe-fetch.js';
import { sendEmail } from './mail.js';
import { trimOldest } from '../lib/bounded.js';

export const QUOTA_NOTICE_WINDOW_SEC = 2 * 3600;

export interface NotifyUser {
  id: number;
  email: string;
  setting: Record<string, unknown>;
}

/** A notice as new-api sends it (the webhook's JSON body; email uses title and content with the values filled in). */
export interface Notice {
  type: 'quota_exceed' | 'channel_update' | 'channel_test';
  title: string;
  content: string;
  values: string[];
  timestamp: number;
}

/**
 * Root's channel notices (new-api-compat.md §4.9): at most one per hour per channel and status change, or per test-all.
 */
export const CHANNEL_NOTICE_WINDOW_SEC = 3600;

/** Most notice slots held in memory (without Redis); past it, expired ones go first, then the oldest. */
export const NOTICE_SLOTS_MAX = 100_000;

/** The notice's content with its `{{value}}` placeholders filled by its values, in order (as new-api's mail). */
export function fillNoticeValues(notice: Pick<Notice, 'content' | 'values'>): string {
  let at = 0;
  return notice.content.replace(/\{\{value\}\}/g, (placeholder) => notice.values[at++] ?? placeholder);
}

export class QuotaNotifier {
  private readonly sentAt = new Map<string, number>();
  /** tests: the bound on sentAt */
  maxSlots = NOTICE_SLOTS_MAX;

  get slotCount(): number {
    return this.sentAt.size;
  }

  constructor(
    private readonly ctx: AppContext,
    /** webhooks are user-chosen URLs: they go only to public addresses (lib/safe-fetch.ts), checked again here */
    private readonly webhooks: SafeFetch = userUrlFetch(ctx),
  ) {}

  private threshold(user: NotifyUser): number {
    const own = Number(user.setting.quota_warning_threshold);
    return Number.isFinite(own) && own > 0 ? own : this.ctx.options.num('QuotaRemindThreshold', 1000);
  }

  /** Whether a notice of `kind` may go to the user now; takes the slot when it may. */
  private async takeSlot(userId: number, kind = 'quota_exceed', windowSec = QUOTA_NOTICE_WINDOW_SEC): Promise<boolean> {
    const { redis, redisPrefix } = this.ctx;
    const key = `${userId}:${kind}`;
    if (redis) {
      const ok = await redis.set(`${redisPrefix}notify_limit:${key}`, '1', 'EX', windowSec, 'NX');
      return ok === 'OK';
    }
    const now = Date.now();
    const last = this.sentAt.get(key);
    if (last !== undefined && now - last < windowSec * 1000) return false;
    if (last === undefined && this.sentAt.size >= this.maxSlots) {
      const longest = Math.max(QUOTA_NOTICE_WINDOW_SEC, CHANNEL_NOTICE_WINDOW_SEC) * 1000;
      for (const [k, at] of this.sentAt) if (now - at >= longest) this.sentAt.delete(k);
      trimOldest(this.sentAt, this.maxSlots);
    }
    this.sentAt.set(key, now);
    return true;
  }

  notice(remaining: number): Notice {
    const o = this.ctx.options;
    const shown = o.bool('DisplayInCurrencyEnabled')
      ? `＄${(remaining / o.num('QuotaPerUnit', 500000)).toFixed(2)}`
      : String(remaining);
    const link = `${o.get('ServerAddress').replace(/\/+$/, '')}/topup`;
    return {
      type: 'quota_exceed',
      title: '您的额度即将用尽',
      content:
        '您的额度即将用尽，当前剩余额度为 {{value}}，为了不影响您的使用，请及时充值。<br/>充值链接：<a href="{{value}}">{{value}}</a>',
      // one value per {{value}}, in order (the link fills its address and its text), as a webhook receiver fills them
      values: [shown, link, link],
      timestamp: Math.floor(Date.now() / 1000),
    };
  }

  /** Cheap synchronous pre-check for the request path: only balances under the threshold need check(). */
  below(user: NotifyUser, remaining: number): boolean {
    return remaining < this.threshold(user);
  }

  /**
   * Call after a charge with the balance it left. Returns once the notice was sent or skipped; callers on the
   * request path should not await it.
   */
  async check(user: NotifyUser, remaining: number, reqId?: string): Promise<'sent' | 'above' | 'limited' | 'failed'> {
    if (remaining >= this.threshold(user)) return 'above';
    try {
      if (!(await this.takeSlot(user.id))) return 'limited';
      return (await this.deliver(user, this.notice(remaining))) ? 'sent' : 'failed';
    } catch (err) {
      this.ctx.log.warn({ err, userId: user.id, reqId }, 'low-quota notice failed');
      return 'failed';
    }
  }

  /**
   * A channel's automatic disable or enable, or the end of a manual test-all, told to the root user (new-api-compat.md
   * §4.9, new-api's NotifyRootUser) by their notice settings; `key` names what changed, for the rate limit (one notice
   * an hour per type and key). Never throws.
   */
  async notifyRoot(
    type: 'channel_update' | 'channel_test',
    key: string,
    title: string,
    content: string,
  ): Promise<'sent' | 'limited' | 'failed'> {
    try {
      const root = await this.ctx.db
        .selectFrom('users')
        .select(['id', 'email', 'setting'])
        .where('role', '=', 100)
        .orderBy('id')
        .executeTakeFirst();
      if (!root) return 'failed';
      if (!(await this.takeSlot(root.id, `${type}:${key}`, CHANNEL_NOTICE_WINDOW_SEC))) return 'limited';
      let setting: Record<string, unknown> = {};
      try {
        setting = JSON.parse(root.setting || '{}') ?? {};
      } catch {
        /* unreadable settings: email to the account address */
      }
      const notice: Notice = { type, title, content, values: [], timestamp: Math.floor(Date.now() / 1000) };
      return (await this.deliver({ id: root.id, email: root.email ?? '', setting }, notice)) ? 'sent' : 'failed';
    } catch (err) {
      this.ctx.log.warn({ err, key }, 'channel notice to root failed');
      return 'failed';
    }
  }

  /** By webhook when the user chose one, else by email (notification_email or the account's); false: nowhere to send. */
  private async deliver(user: NotifyUser, notice: Notice): Promise<boolean> {
    if (
      user.setting.notify_type === 'webhook' &&
      typeof user.setting.webhook_url === 'string' &&
      user.setting.webhook_url
    ) {
      await this.sendWebhook(user.setting.webhook_url, String(user.setting.webhook_secret ?? ''), notice);
      return true;
    }
    const to = (typeof user.setting.notification_email === 'string' && user.setting.notification_email) || user.email;
    if (!to) return false;
    await sendEmail(this.ctx, notice.title, to, fillNoticeValues(notice));
    return true;
  }

  private async sendWebhook(url: string, secret: string, notice: Notice): Promise<void> {
    const body = JSON.stringify(notice);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (secret) headers['X-Webhook-Signature'] = createHmac('sha256', secret).update(body).digest('hex');
    // new-api adds the secret as a bearer token when its worker carries the webhook (service/webhook.go)
    if (secret && this.webhooks.usesWorker()) headers.Authorization = `Bearer ${secret}`;
    const status = await this.webhooks.post(url, headers, body, 10_000);
    if (status >= 300) throw new Error(`webhook answered ${status}`);
  }
}
