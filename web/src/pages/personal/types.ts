export interface SelfUser {
  id: number;
  username: string;
  display_name: string;
  role: number;
  status: number;
  group: string;
  email: string;
  quota: number;
  used_quota: number;
  request_count: number;
  aff_code?: string;
  aff_count: number;
  aff_quota: number;
  aff_history_quota: number;
  github_id?: string;
  oidc_id?: string;
  wechat_id?: string;
  telegram_id?: string;
  linux_do_id?: string;
  /** Sent only by servers that offer Discord login. */
  discord_id?: string;
  access_token?: string | null;
  setting?: string;
}

export interface UserSetting {
  notify_type?: 'email' | 'webhook';
  quota_warning_threshold?: number;
  webhook_url?: string;
  webhook_secret?: string;
  notification_email?: string;
  accept_unset_model_ratio_model?: boolean;
}

export function parseSetting(raw: string | undefined): UserSetting {
  if (!raw) return {};
  try {
    const v = JSON.parse(raw) as unknown;
    return v && typeof v === 'object' ? (v as UserSetting) : {};
  } catch {
    return {};
  }
}

/** Quota warning presets of spec §9 (quota → dollars shown). */
export const THRESHOLD_PRESETS = [100000, 500000, 1000000, 5000000];
export const DEFAULT_THRESHOLD = 500000;
