/** The caller's own user: one type and query for every page (lib/self.ts). */
export type { SelfUser } from '../../lib/self.js';

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
