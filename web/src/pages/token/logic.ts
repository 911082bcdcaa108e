// Pure token rules (spec §5 Token form, §9 token presets and expiry shortcuts).
import { timestamp2string } from '../../lib/render.js';

export interface Token {
  id: number;
  user_id?: number;
  key: string;
  status: number;
  name: string;
  created_time: number;
  accessed_time?: number;
  expired_time: number;
  remain_quota: number;
  unlimited_quota: boolean;
  model_limits_enabled: boolean;
  model_limits: string;
  allow_ips: string | null;
  used_quota: number;
  group: string;
}

/** Spec §9 quota presets (quota units; 500000 = $1). */
export const QUOTA_PRESETS = [500000, 5000000, 25000000, 50000000, 250000000, 500000000];
/** Spec §9 batch create counts. */
export const BATCH_COUNTS = [10, 20, 30, 100];
export const DEFAULT_TOKEN_QUOTA = 500000;

export type ExpiryShortcut = 'never' | 'hour' | 'day' | 'month';

/** The expiry text for a shortcut, from `nowSec` (month = 30 days, spec §9). */
export function expiryShortcut(kind: ExpiryShortcut, nowSec: number): string {
  switch (kind) {
    case 'never':
      return '-1';
    case 'hour':
      return timestamp2string(nowSec + 3600);
    case 'day':
      return timestamp2string(nowSec + 86400);
    case 'month':
      return timestamp2string(nowSec + 30 * 86400);
  }
}

const EXPIRY_RE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/**
 * Parses the expiry field: "-1" is never (-1), otherwise local "yyyy-MM-dd HH:mm:ss" → unix seconds.
 * Returns null for anything else (过期时间格式错误！), including impossible dates such as 2025-02-30.
 */
export function parseExpiry(text: string): number | null {
  const s = text.trim();
  if (s === '-1') return -1;
  const m = EXPIRY_RE.exec(s);
  if (!m) return null;
  const [y, mo, d, h, mi, se] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const date = new Date(y, mo - 1, d, h, mi, se);
  if (
    date.getFullYear() !== y ||
    date.getMonth() !== mo - 1 ||
    date.getDate() !== d ||
    date.getHours() !== h ||
    date.getMinutes() !== mi ||
    date.getSeconds() !== se
  ) {
    return null;
  }
  return Math.floor(date.getTime() / 1000);
}

export function formatExpiry(expiredTime: number): string {
  return expiredTime === -1 ? '-1' : timestamp2string(expiredTime);
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export function randomSuffix(length = 6, rand: () => number = Math.random): string {
  let s = '';
  for (let i = 0; i < length; i++) s += ALPHABET[Math.floor(rand() * ALPHABET.length)];
  return s;
}

/** Names for a batch create: the first keeps the name, each extra one gets "-" and a random 6-char suffix. */
export function batchNames(name: string, count: number, rand?: () => number): string[] {
  const out = [name];
  for (let i = 1; i < count; i++) out.push(`${name}-${randomSuffix(6, rand)}`);
  return out;
}

export interface TokenFormValues {
  name: string;
  expired: string;
  remain_quota: number | string | null;
  unlimited_quota: boolean;
  model_limits_enabled: boolean;
  model_limits: string[];
  allow_ips: string;
  group: string;
  count: number | string | null;
}

export type TokenCheck = { ok: true; payload: Record<string, unknown>; count: number } | { ok: false; error: string };

const isInt = (v: unknown) => /^-?\d+$/.test(String(v ?? '').trim());

/** Validates the drawer (spec §5 Token form) and builds the POST/PUT body. */
export function checkTokenForm(v: TokenFormValues, editId?: number): TokenCheck {
  const isEdit = editId !== undefined;
  if (!isEdit && v.name.trim() === '') return { ok: false, error: 'err.name' };
  if ([...v.name.trim()].length > 30) return { ok: false, error: 'err.nameLong' };
  const expired = parseExpiry(v.expired);
  if (expired === null) return { ok: false, error: 'err.expiry' };
  if (!v.unlimited_quota && !isInt(v.remain_quota)) return { ok: false, error: 'err.quota' };
  let count = 1;
  if (!isEdit) {
    if (!isInt(v.count) || Number(v.count) < 1) return { ok: false, error: 'err.count' };
    count = Number(v.count);
  }
  const payload: Record<string, unknown> = {
    name: v.name.trim(),
    expired_time: expired,
    remain_quota: v.unlimited_quota && !isInt(v.remain_quota) ? 0 : Number(v.remain_quota),
    unlimited_quota: v.unlimited_quota,
    model_limits_enabled: v.model_limits_enabled,
    model_limits: v.model_limits.join(','),
    allow_ips: v.allow_ips.trim(),
    group: v.group,
  };
  if (isEdit) payload.id = editId;
  return { ok: true, payload, count };
}

export function tokenToForm(tok: Token): TokenFormValues {
  return {
    name: tok.name,
    expired: formatExpiry(tok.expired_time),
    remain_quota: tok.remain_quota,
    unlimited_quota: !!tok.unlimited_quota,
    model_limits_enabled: !!tok.model_limits_enabled,
    model_limits: (tok.model_limits ?? '').split(',').filter(Boolean),
    allow_ips: tok.allow_ips ?? '',
    group: tok.group ?? '',
    count: 1,
  };
}

export function defaultTokenForm(): TokenFormValues {
  return {
    name: '',
    expired: '-1',
    remain_quota: DEFAULT_TOKEN_QUOTA,
    unlimited_quota: false,
    model_limits_enabled: false,
    model_limits: [],
    allow_ips: '',
    group: '',
    count: 1,
  };
}

/** Spec §4 token status: 1 enabled, 2 disabled, 3 expired, 4 exhausted. */
export const TOKEN_STATUS = { enabled: 1, disabled: 2, expired: 3, exhausted: 4 } as const;

/** Users toggle only between enabled and disabled (spec §4); an expired or exhausted token needs an edit first. */
export function canToggleStatus(status: number): boolean {
  return status === TOKEN_STATUS.enabled || status === TOKEN_STATUS.disabled;
}

/** Keys are stored without the prefix (new-api-compat.md §2.2); the console shows and copies them as sk-…. */
export function fullKey(key: string): string {
  return key.startsWith('sk-') ? key : `sk-${key}`;
}

export function maskKey(key: string): string {
  const k = fullKey(key);
  return k.length <= 14 ? k : `${k.slice(0, 7)}…${k.slice(-4)}`;
}

/** Every token query (pages, searches, their limits, the one being edited) starts with this key: a change invalidates
 * them all. */
export const TOKENS_KEY = ['tokens'] as const;
