// Automatic channel disable / enable (new-api-compat.md §4.9). Disabling sets status 3 with
// other_info.status_reason/status_time, turns the channel's abilities off and publishes {kind:'channels'} so every
// cache rebuilds; root is told of each automatic change (new-api-compat.md §4.9) through the notice callback.
import type { AppContext } from '../context.js';
import { autoDisableKey, enableKey } from './multi-key-store.js';

export const CHANNEL_STATUS_ENABLED = 1;
export const CHANNEL_STATUS_MANUALLY_DISABLED = 2;
export const CHANNEL_STATUS_AUTO_DISABLED = 3;

export interface UpstreamErrorInfo {
  status: number;
  message: string;
  type?: string;
  code?: string | number | null;
  /** errors raised before reaching the upstream never disable a channel */
  local?: boolean;
}

const DISABLE_CODES = new Set(['invalid_api_key', 'account_deactivated', 'billing_not_active']);
const DISABLE_TYPES = new Set([
  'insufficient_quota',
  'insufficient_user_quota',
  'authentication_error',
  'permission_error',
  'forbidden',
]);

/** Tells root about an automatic status change (QuotaNotifier.notifyRoot): rate-limit key, title, content. */
export type ChannelNotice = (key: string, title: string, content: string) => void;

export class ChannelStatus {
  private keywordsRaw = '';
  private keywords: string[] = [];

  constructor(
    private readonly ctx: AppContext,
    private readonly notify: ChannelNotice,
  ) {}

  private disableKeywords(): string[] {
    const raw = this.ctx.options.get('AutomaticDisableKeywords');
    if (raw !== this.keywordsRaw) {
      this.keywordsRaw = raw;
      this.keywords = raw
        .split('\n')
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean);
    }
    return this.keywords;
  }

  /** The error alone says "disable this channel" (ignores the option and auto_ban). */
  isDisableWorthy(channelType: number, err: UpstreamErrorInfo): boolean {
    if (err.local) return false;
    if (err.status === 401) return true;
    if (err.status === 403 && channelType === 24) return true;
    if (err.code != null && DISABLE_CODES.has(String(err.code))) return true;
    if (err.type && DISABLE_TYPES.has(err.type)) return true;
    const msg = (err.message ?? '').toLowerCase();
    return this.disableKeywords().some((k) => msg.includes(k));
  }

  /** ShouldDisableChannel: the option is on, the channel allows auto-ban, and the error warrants it. */
  shouldDisable(channel: { type: number; autoBan: boolean }, err: UpstreamErrorInfo): boolean {
    if (!this.ctx.options.bool('AutomaticDisableChannelEnabled')) return false;
    if (!channel.autoBan) return false;
    return this.isDisableWorthy(channel.type, err);
  }

  /** Sets status 3 (only from status 1), records why, disables the abilities. Returns whether it changed anything. */
  async disable(channelId: number, reason: string, reqId?: string): Promise<boolean> {
    const db = this.ctx.db;
    const row = await db
      .selectFrom('channels')
      .select(['name', 'status', 'other_info'])
      .where('id', '=', channelId)
      .executeTakeFirst();
    if (!row || row.status !== CHANNEL_STATUS_ENABLED) return false;
    let info: Record<string, unknown> = {};
    try {
      info = JSON.parse(row.other_info || '{}') ?? {};
    } catch {
      info = {};
    }
    info.status_reason = reason;
    info.status_time = Math.floor(Date.now() / 1000);
    const r = await db
      .updateTable('channels')
      .set({ status: CHANNEL_STATUS_AUTO_DISABLED, other_info: JSON.stringify(info) })
      .where('id', '=', channelId)
      .where('status', '=', CHANNEL_STATUS_ENABLED)
      .executeTakeFirst();
    await db.updateTable('abilities').set({ enabled: false }).where('channel_id', '=', channelId).execute();
    this.ctx.log.warn({ channelId, reason, reqId }, 'channel disabled automatically');
    this.ctx.changes.publish({ kind: 'channels' });
    const changed = Number(r.numUpdatedRows) > 0;
    // new-api's texts (service/channel.go DisableChannel)
    if (changed)
      this.notify(
        `${channelId}_${CHANNEL_STATUS_AUTO_DISABLED}`,
        `通道「${row.name}」（#${channelId}）已被禁用`,
        `通道「${row.name}」（#${channelId}）已被禁用，原因：${reason}`,
      );
    return changed;
  }

  /** Re-enables an automatically disabled channel (never a manually disabled one). */
  async enable(channelId: number): Promise<boolean> {
    const db = this.ctx.db;
    const r = await db
      .updateTable('channels')
      .set({ status: CHANNEL_STATUS_ENABLED })
      .where('id', '=', channelId)
      .where('status', '=', CHANNEL_STATUS_AUTO_DISABLED)
      .executeTakeFirst();
    if (!Number(r.numUpdatedRows)) return false;
    await db.updateTable('abilities').set({ enabled: true }).where('channel_id', '=', channelId).execute();
    this.ctx.log.info({ channelId }, 'channel enabled automatically');
    this.ctx.changes.publish({ kind: 'channels' });
    const name =
      (await db.selectFrom('channels').select('name').where('id', '=', channelId).executeTakeFirst())?.name ?? '';
    const text = `通道「${name}」（#${channelId}）已被启用`;
    this.notify(`${channelId}_${CHANNEL_STATUS_ENABLED}`, text, text);
    return true;
  }

  /**
   * A multi-key channel's key `index` (holding `key` when it was chosen) disabled automatically, with the reason and
   * time; the channel only when it was the last enabled key (root is told then, as for a channel).
   */
  async disableKey(channelId: number, index: number, key: string, reason: string, reqId?: string): Promise<boolean> {
    const r = await autoDisableKey(this.ctx, channelId, index, key, reason);
    if (!r.changed) return false;
    this.ctx.log.warn({ channelId, keyIndex: index, reason, reqId }, 'channel key disabled automatically');
    if (r.channelStatus === CHANNEL_STATUS_AUTO_DISABLED)
      this.notify(
        `${channelId}_${CHANNEL_STATUS_AUTO_DISABLED}`,
        `通道「${r.name}」（#${channelId}）已被禁用`,
        `通道「${r.name}」（#${channelId}）已被禁用，原因：${reason}`,
      );
    return true;
  }

  /** An automatically disabled key that answers again (never one disabled by hand); its channel with it if needed. */
  async enableKey(channelId: number, index: number): Promise<boolean> {
    const r = await enableKey(this.ctx, channelId, index, true);
    if (!r.changed) return false;
    this.ctx.log.info({ channelId, keyIndex: index }, 'channel key enabled automatically');
    if (r.channelStatus === CHANNEL_STATUS_ENABLED) {
      const text = `通道「${r.name}」（#${channelId}）已被启用`;
      this.notify(`${channelId}_${CHANNEL_STATUS_ENABLED}`, text, text);
    }
    return true;
  }
}
