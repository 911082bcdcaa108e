// Console HTTP client (new-api-compat.md §11.3, spec §7/§8): same-origin cookies, the New-Api-User header taken from
// the stored user on every call (so a fresh login needs no client rebuild), generic error toasts, 401 → login.
// Envelope messages are shown in the console's language (translateServerMessage: new-api's Chinese texts in English).
import { message } from './feedback.js';
import i18n, { currentLanguage, localeTag } from '../i18n/index.js';
import { translateServerMessage } from '../i18n/server-message.js';

export interface Envelope<T> {
  success: boolean;
  message: string;
  data: T;
}

export const USER_KEY = 'user';

function storedUserId(): number {
  try {
    const raw = localStorage.getItem(USER_KEY);
    if (!raw) return -1;
    const id = (JSON.parse(raw) as { id?: unknown }).id;
    return typeof id === 'number' ? id : Number(id) || -1;
  } catch {
    return -1;
  }
}

function headers(extra?: HeadersInit): Headers {
  const h = new Headers(extra);
  h.set('New-Api-User', String(storedUserId()));
  h.set('Cache-Control', 'no-store');
  // the relay (the playground's /pg calls) answers its errors in Chinese or English: Chinese for a Chinese console
  // (zh-TW reads it through its `_server` table), English for the others
  if (!h.has('Accept-Language')) h.set('Accept-Language', currentLanguage().startsWith('zh') ? localeTag() : 'en');
  return h;
}

/** Raw fetch with the console headers (used for SSE streaming in the playground). */
export function apiFetch(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(path, { credentials: 'same-origin', ...init, headers: headers(init.headers) });
}

export class HttpError extends Error {
  constructor(
    public readonly status: number,
    text: string,
  ) {
    super(text);
  }
}

function t(key: string, opts?: Record<string, unknown>): string {
  return i18n.t(key, { ns: 'common', ...opts });
}

/** Redirect target when the session is gone; kept as a hook so unit tests can observe it. */
export const navigation = {
  redirect(url: string): void {
    window.location.href = url;
  },
};

function handleHttpError(status: number, text: string): void {
  if (status === 401) {
    localStorage.removeItem(USER_KEY);
    if (!window.location.pathname.startsWith('/login')) navigation.redirect('/login?expired=true');
    return;
  }
  if (status === 429) void message.error(t('error.tooMany'));
  else if (status === 500) void message.error(t('error.server'));
  else if (status === 405) void message.info(t('error.demo'));
  else void message.error(t('error.other', { message: translateServerMessage(text) }));
}

function query(params?: Record<string, unknown>): string {
  if (!params) return '';
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    sp.set(k, String(v));
  }
  const s = sp.toString();
  return s ? `?${s}` : '';
}

async function request<T>(method: string, url: string, body?: unknown): Promise<Envelope<T>> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { 'Content-Type': 'application/json' };
  }
  let res: Response;
  try {
    res = await apiFetch(url, init);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    void message.error(t('error.other', { message: msg }));
    throw e;
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    const msg =
      parsed && typeof parsed === 'object' && typeof (parsed as { message?: unknown }).message === 'string'
        ? (parsed as { message: string }).message
        : text || res.statusText || `HTTP ${res.status}`;
    // Some routes (POST /api/setup) answer 4xx with an envelope; hand it to the caller after toasting.
    handleHttpError(res.status, msg);
    if (parsed && typeof parsed === 'object' && 'success' in parsed) {
      const env = parsed as Envelope<T>;
      return { ...env, message: translateServerMessage(env.message) };
    }
    throw new HttpError(res.status, translateServerMessage(msg));
  }
  if (!parsed || typeof parsed !== 'object') {
    return { success: false, message: text || 'empty response', data: undefined as T };
  }
  const env = parsed as Partial<Envelope<T>>;
  // the server's Chinese texts (kept on the wire for new-api clients) in the console's language, wherever a page
  // shows the message: toasts, alerts, errors it throws
  const shown = translateServerMessage(env.message ?? '');
  return { ...(parsed as object), success: !!env.success, message: shown, data: env.data as T };
}

export const api = {
  get<T>(url: string, params?: Record<string, unknown>): Promise<Envelope<T>> {
    return request<T>('GET', url + query(params));
  },
  post<T>(url: string, body?: unknown): Promise<Envelope<T>> {
    return request<T>('POST', url, body);
  },
  put<T>(url: string, body?: unknown): Promise<Envelope<T>> {
    return request<T>('PUT', url, body);
  },
  patch<T>(url: string, body?: unknown): Promise<Envelope<T>> {
    return request<T>('PATCH', url, body);
  },
  del<T>(url: string): Promise<Envelope<T>> {
    return request<T>('DELETE', url);
  },
};

/** The generic failure texts of spec §8, for a refusal that carries no message of its own. */
export type FailureKey = 'error.saveFailed' | 'error.updateFailed' | 'error.refreshFailed';

/** A failed envelope's text: the server's message, else the action's generic failure (保存失败, 更新失败, 刷新失败). */
export function failureText(res: Pick<Envelope<unknown>, 'message'>, fallback: FailureKey): string {
  return res.message || t(fallback);
}

/** Shows a failed envelope's message as an error toast; returns whether it succeeded. */
export function showIfError(res: Envelope<unknown>): boolean {
  if (!res.success) void message.error(res.message || t('error.unknown'));
  return res.success;
}
