// Pure usage-log rules (spec §4 log types, §5 Log queries, §9 log colours; new-api-compat.md §5.7 other JSON).
export interface LogRow {
  id: number;
  user_id: number;
  created_at: number;
  type: number;
  content: string;
  username: string;
  token_name: string;
  model_name: string;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  use_time: number;
  is_stream: boolean | number;
  channel?: number;
  channel_name?: string;
  token_id?: number;
  group: string;
  other: string;
}

export interface LogOther {
  frt?: number;
  model_ratio?: number;
  model_price?: number;
  group_ratio?: number;
  completion_ratio?: number;
  cache_tokens?: number;
  cache_ratio?: number;
  is_model_mapped?: boolean;
  upstream_model_name?: string;
  reasoning_effort?: string;
  admin_info?: { use_channel?: (number | string)[] };
  [key: string]: unknown;
}

export function parseOther(other: string | null | undefined): LogOther {
  if (!other) return {};
  try {
    const v: unknown = JSON.parse(other);
    return v && typeof v === 'object' ? (v as LogOther) : {};
  } catch {
    return {};
  }
}

/** Use time in seconds: under 101 green, under 300 orange, else red (spec §9). */
export function elapsedColor(seconds: number): 'green' | 'orange' | 'red' {
  if (seconds < 101) return 'green';
  if (seconds < 300) return 'orange';
  return 'red';
}

/** First token time in seconds: under 3 green, under 10 orange, else red (spec §9). */
export function firstTokenColor(seconds: number): 'green' | 'orange' | 'red' {
  if (seconds < 3) return 'green';
  if (seconds < 10) return 'orange';
  return 'red';
}

/** other.frt is milliseconds; -1000 (or missing) means no first byte was seen (new-api-compat.md §5.7). */
export function firstTokenSeconds(other: LogOther): number | null {
  const frt = typeof other.frt === 'number' ? other.frt : null;
  if (frt === null || frt < 0) return null;
  return frt / 1000;
}

/** Retry path from other.admin_info.use_channel, e.g. "1 → 3"; null when the first channel answered. */
export function retryPath(other: LogOther): string | null {
  const chans = other.admin_info?.use_channel;
  if (!Array.isArray(chans) || chans.length === 0) return null;
  return chans.join(' → ');
}

export const LOG_TYPE_COLORS: Record<number, string> = { 1: 'cyan', 2: 'green', 3: 'orange', 4: 'purple' };

export interface LogFilters {
  type: number;
  username: string;
  token_name: string;
  model_name: string;
  start: string;
  end: string;
  channel: string;
  group: string;
}

/** Local "YYYY-MM-DD HH:mm:ss" (or anything Date parses) → unix seconds; empty/invalid → undefined. */
export function toSeconds(text: string): number | undefined {
  const s = text.trim();
  if (!s) return undefined;
  const ms = Date.parse(s.replace(' ', 'T'));
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
}

/** Query parameters of the log and stat calls: every filter optional, times in seconds (spec §5 Log queries). */
export function buildLogQuery(f: LogFilters, admin: boolean): Record<string, string | number | undefined> {
  const q: Record<string, string | number | undefined> = {
    type: f.type || undefined,
    token_name: f.token_name.trim() || undefined,
    model_name: f.model_name.trim() || undefined,
    start_timestamp: toSeconds(f.start),
    end_timestamp: toSeconds(f.end),
    group: f.group.trim() || undefined,
  };
  if (admin) {
    q.username = f.username.trim() || undefined;
    q.channel = f.channel.trim() || undefined;
  }
  return q;
}
