// Per-channel `setting` JSON (new-api-compat.md §4.6 step 9, §4.7): `proxy` (http(s):// or socks5:// URL for upstream
// calls), `thinking_to_content` (reasoning_content is turned into content wrapped in <think>…</think>) and
// `force_format` (chat answers keep only the fields of OpenAI's format). Parsed once by the channel cache; the hot path
// only checks these fields.
import type { CachedChannel } from '../services/cache/channel-cache.js';
import { UndiciTransport, type Transport } from './transport/index.js';
import { CappedMap } from '../lib/bounded.js';
import { hubOutputTransform, type HubOutputTransform } from './hub/output-transforms.js';

/**
 * One transport per proxy URL, kept across requests (its pool of connections). A proxy URL is channel setting, edited
 * over the process's life: bounded, the oldest closed once its requests are done (a channel still using it gets a
 * new one).
 */
export const proxies = new CappedMap<string, UndiciTransport>(64, (t) => void t.close().catch(() => undefined));

/**
 * The transport for a channel's upstream calls (the relay's and the probes'): through its proxy when `setting.proxy`
 * is set, else `direct` (the shared keep-alive pools).
 */
export function transportFor(channel: Pick<CachedChannel, 'setting'>, direct: Transport): Transport {
  const url = proxyOf(channel);
  return url ? proxyTransport(url) : direct;
}

/** The shared transport of one proxy URL (http(s):// or socks5://), made on first use. */
export function proxyTransport(url: string): UndiciTransport {
  let t = proxies.get(url);
  if (!t) {
    // undici's proxy agents: undici is imported with the first proxied request (lib/undici.ts)
    t = new UndiciTransport((undici) =>
      /^socks5h?:\/\//i.test(url) ? new undici.Socks5ProxyAgent(url) : new undici.ProxyAgent(url),
    );
    proxies.set(url, t);
  }
  return t;
}

/** The channel's proxy URL (`setting.proxy`, trimmed), or null: the HTTP transports and the websockets use it. */
export function proxyOf(channel: Pick<CachedChannel, 'setting'>): string | null {
  const p = channel.setting?.proxy;
  return typeof p === 'string' && p.trim() ? p.trim() : null;
}

/** The proxy of a channel's `setting` column as read from the table (the cache parses the same JSON). */
export function proxyOfSetting(setting: string | null | undefined): string | null {
  try {
    const v: unknown = JSON.parse(setting || '{}');
    return v && typeof v === 'object' ? proxyOf({ setting: v as Record<string, unknown> }) : null;
  } catch {
    return null;
  }
}

export async function closeProxies(): Promise<void> {
  const all = [...proxies.values()];
  proxies.clear();
  await Promise.allSettled(all.map((t) => t.close()));
}

export const thinkingToContent = (channel: CachedChannel): boolean => channel.setting?.thinking_to_content === true;

/** Stream transform: reasoning deltas become `<think>\n…` content, closed by `\n</think>\n` before the first answer. */
export function thinkingStreamConverter(): (data: string) => string[] {
  let state: 'none' | 'thinking' | 'done' = 'none';
  return (data) => {
    if (!data.includes('reasoning_content')) {
      if (state !== 'thinking') return [data];
      if (!data.includes('"content"') && !data.includes('"tool_calls"') && !data.includes('"finish_reason":"'))
        return [data];
    }
    let j: any;
    try {
      j = JSON.parse(data);
    } catch {
      return [data];
    }
    let changed = false;
    for (const c of j?.choices ?? []) {
      const d = c?.delta;
      if (!d) continue;
      const r = typeof d.reasoning_content === 'string' ? d.reasoning_content : '';
      const content = typeof d.content === 'string' ? d.content : '';
      if (r) {
        d.content = (state === 'none' ? '<think>\n' : '') + r;
        state = 'thinking';
        delete d.reasoning_content;
        changed = true;
      } else if (
        state === 'thinking' &&
        (content || (Array.isArray(d.tool_calls) && d.tool_calls.length) || c.finish_reason)
      ) {
        // closed before the first answer, tool call or finish, whichever comes first
        d.content = '\n</think>\n' + content;
        state = 'done';
        changed = true;
      } else if ('reasoning_content' in d) {
        delete d.reasoning_content;
        changed = true;
      }
    }
    return [changed ? JSON.stringify(j) : data];
  };
}

/** Non-stream transform of a chat completion body. */
export function thinkingToContentBody(buf: Buffer): Buffer {
  let j: any;
  try {
    j = JSON.parse(buf.toString('utf8'));
  } catch {
    return buf;
  }
  let changed = false;
  for (const c of j?.choices ?? []) {
    const m = c?.message;
    if (m && typeof m.reasoning_content === 'string' && m.reasoning_content) {
      m.content = `<think>\n${m.reasoning_content}\n</think>\n${typeof m.content === 'string' ? m.content : ''}`;
      delete m.reasoning_content;
      changed = true;
    }
  }
  return changed ? Buffer.from(JSON.stringify(j)) : buf;
}

export const forceFormat = (channel: CachedChannel): boolean => channel.setting?.force_format === true;

/** Copies the keys of `keys` that `from` has, in that order (JSON.stringify drops the undefined ones). */
function pick(from: any, keys: readonly string[]): Record<string, unknown> | undefined {
  if (!from || typeof from !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  for (const k of keys) if (from[k] !== undefined) out[k] = from[k];
  return out;
}

const TOP = ['id', 'object', 'created', 'model', 'system_fingerprint'] as const;
const MESSAGE = ['role', 'content', 'reasoning_content', 'tool_calls'] as const;
const USAGE = [
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'prompt_tokens_details',
  'completion_tokens_details',
] as const;

/**
 * force_format (new-api re-encodes each answer through its OpenAI structs): an answer keeps only the fields of
 * OpenAI's chat format, so that vendor additions (citations, provider names, …) cannot trip strict clients.
 * `part` is `delta` for stream chunks, `message` for whole answers.
 */
function openAIShape(j: any, part: 'delta' | 'message'): Record<string, unknown> {
  const out = pick(j, TOP)!;
  out.choices = Array.isArray(j.choices)
    ? j.choices.map((c: any) => ({
        index: c?.index ?? 0,
        [part]: pick(c?.[part], MESSAGE) ?? {},
        logprobs: c?.logprobs ?? null,
        finish_reason: c?.finish_reason ?? null,
      }))
    : [];
  const usage = pick(j.usage, USAGE);
  if (usage) out.usage = usage;
  return out;
}

/** Stream transform for force_format: each chunk re-encoded in OpenAI's chunk shape (left as sent if not JSON). */
export function forceFormatChunk(data: string): string[] {
  try {
    return [JSON.stringify(openAIShape(JSON.parse(data), 'delta'))];
  } catch {
    return [data];
  }
}

/** force_format of a whole chat completion (left as sent if not JSON). */
export function forceFormatBody(buf: Buffer): Buffer {
  try {
    return Buffer.from(JSON.stringify(openAIShape(JSON.parse(buf.toString('utf8')), 'message')));
  } catch {
    return buf;
  }
}

/** The channel's output settings as transforms of hub answers (hub/output-transforms.ts), or null when none is set. */
export function hubOutputTransformOf(channel: CachedChannel): HubOutputTransform | null {
  return hubOutputTransform(forceFormat(channel), thinkingToContent(channel));
}
