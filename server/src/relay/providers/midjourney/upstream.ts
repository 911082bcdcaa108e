// The request midjourney-proxy receives: `{base}/mj/...` (the mode prefix stripped, as new-api), the channel's key in
// `mj-api-secret` and never the client's Authorization or any other client header but the two content headers, and
// the JSON body filtered by the drawing options. Pure: the integrator sends it (through the channel's proxy).
import type { MjMode } from './routes.js';

export interface MjChannel {
  /** the channel's base URL (no trailing slash needed) */
  baseUrl: string;
  /** the channel's key; a leading "Bearer " is dropped, as new-api does */
  key: string;
}

/** The drawing options that change what is sent. */
export interface MjUpstreamOptions {
  /** MjModeClearEnabled: --fast, --relax and --turbo are removed from `prompt` */
  modeClear: boolean;
  /** MjAccountFilterEnabled: `accountFilter` is sent only when on */
  accountFilter: boolean;
  /** MjNotifyEnabled: `notifyHook` is sent only when on */
  notify: boolean;
  /**
   * When notify is on and this is set, the upstream calls the gateway's signed hook (mjNotifyHookUrl) instead of
   * the client's: new-api forwards the client's hook, so the gateway never learns of the change that way.
   */
  gatewayNotifyHook?: string;
  /**
   * Keep the client's /mj-<mode> prefix on the upstream path (for a proxy that serves mode paths). Off by default:
   * new-api strips it and midjourney-proxy serves /mj only.
   */
  keepModePrefix?: boolean;
}

export interface MjUpstreamRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  /** the JSON text to send; undefined for a GET */
  body?: string;
  /** new-api's timeouts: 60 s for a submit, 30 s for image-seed, 15 s for the poller's list */
  timeoutMs: number;
}

export const MJ_SUBMIT_TIMEOUT_MS = 60_000;
export const MJ_IMAGE_SEED_TIMEOUT_MS = 30_000;
export const MJ_LIST_TIMEOUT_MS = 15_000;

function base(channel: MjChannel): string {
  return channel.baseUrl.replace(/\/+$/, '');
}

function secretHeaders(channel: MjChannel, accept = 'application/json'): Record<string, string> {
  return { 'mj-api-secret': channel.key.replace(/^Bearer /, ''), accept };
}

function withMode(path: string, mode: MjMode | null, keep: boolean | undefined): string {
  return keep && mode ? `/mj-${mode}${path}` : path;
}

/** The prompt without the speed flags; the spaces they leave are kept, as new-api's strings.Replace leaves them. */
export function clearModeFlags(prompt: string): string {
  return prompt.replace(/--fast|--relax|--turbo/g, '');
}

/** The body to send: the client's fields minus those the options drop (a copy; the input is not changed). */
export function filterMjBody(body: Record<string, unknown>, options: MjUpstreamOptions): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body };
  if (!options.accountFilter) delete out.accountFilter;
  if (!options.notify) delete out.notifyHook;
  else if (options.gatewayNotifyHook) out.notifyHook = options.gatewayNotifyHook;
  if (options.modeClear && typeof out.prompt === 'string') out.prompt = clearModeFlags(out.prompt);
  return out;
}

/** A submit (or insight-face swap) to the chosen channel, or to the origin task's channel for a follow-up. */
export function buildMjSubmitRequest(
  channel: MjChannel,
  route: { upstreamPath: string; mode: MjMode | null },
  body: Record<string, unknown>,
  options: MjUpstreamOptions,
): MjUpstreamRequest {
  return {
    method: 'POST',
    url: base(channel) + withMode(route.upstreamPath, route.mode, options.keepModePrefix),
    headers: { ...secretHeaders(channel), 'content-type': 'application/json' },
    body: JSON.stringify(filterMjBody(body, options)),
    timeoutMs: MJ_SUBMIT_TIMEOUT_MS,
  };
}

/** GET /mj/task/{id}/image-seed on the origin task's channel. */
export function buildMjImageSeedRequest(channel: MjChannel, upstreamTaskId: string): MjUpstreamRequest {
  return {
    method: 'GET',
    url: `${base(channel)}/mj/task/${encodeURIComponent(upstreamTaskId)}/image-seed`,
    headers: secretHeaders(channel),
    timeoutMs: MJ_IMAGE_SEED_TIMEOUT_MS,
  };
}

/** The poller's batch: POST /mj/task/list-by-condition {"ids":[…]} on one channel. */
export function buildMjListRequest(channel: MjChannel, upstreamTaskIds: readonly string[]): MjUpstreamRequest {
  return {
    method: 'POST',
    url: `${base(channel)}/mj/task/list-by-condition`,
    headers: { ...secretHeaders(channel), 'content-type': 'application/json' },
    body: JSON.stringify({ ids: upstreamTaskIds }),
    timeoutMs: MJ_LIST_TIMEOUT_MS,
  };
}

/** GET /mj/task/{id}/fetch on one channel (for a single task; the poller uses the list). */
export function buildMjFetchRequest(channel: MjChannel, upstreamTaskId: string): MjUpstreamRequest {
  return {
    method: 'GET',
    url: `${base(channel)}/mj/task/${encodeURIComponent(upstreamTaskId)}/fetch`,
    headers: secretHeaders(channel),
    timeoutMs: MJ_LIST_TIMEOUT_MS,
  };
}
