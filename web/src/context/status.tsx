// Site status (/api/status). Cached in localStorage under the keys of new-api-compat.md §11.4 so the first paint does
// not wait.
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, type Envelope } from '../lib/api.js';

export interface ChatLink {
  [name: string]: string;
}

export interface Status {
  version?: string;
  start_time?: number;
  system_name?: string;
  logo?: string;
  footer_html?: string;
  quota_per_unit?: number;
  display_in_currency?: boolean;
  docs_link?: string;
  enable_drawing?: boolean;
  enable_task?: boolean;
  enable_data_export?: boolean;
  data_export_default_time?: string;
  default_collapse_sidebar?: boolean;
  mj_notify_enabled?: boolean;
  chats?: ChatLink[];
  chat_link?: string;
  chat_link2?: string;
  email_verification?: boolean;
  turnstile_check?: boolean;
  turnstile_site_key?: string;
  github_oauth?: boolean;
  github_client_id?: string;
  oidc_enabled?: boolean;
  oidc_client_id?: string;
  oidc_authorization_endpoint?: string;
  linuxdo_oauth?: boolean;
  linuxdo_client_id?: string;
  wechat_login?: boolean;
  wechat_qrcode?: string;
  telegram_oauth?: boolean;
  telegram_bot_name?: string;
  passkey_login?: boolean;
  /** Undefined until /api/status answered once (or a cached copy exists). */
  setup?: boolean;
  self_use_mode_enabled?: boolean;
  demo_site_enabled?: boolean;
  server_address?: string;
  top_up_link?: string;
  min_topup?: number;
  price?: number;
  enable_online_topup?: boolean;
  enable_stripe_topup?: boolean;
  stripe_unit_price?: number;
  stripe_min_topup?: number;
  enable_creem_topup?: boolean;
  /** the CreemProducts option's products (new-api's fields), when Creem is on */
  creem_products?: Array<{ productId: string; name: string; price: number; currency: string; quota: number }>;
  enable_batch_update?: boolean;
  [key: string]: unknown;
}

export interface StatusContextValue {
  status: Status;
  /** True once /api/status answered (success or not) in this page load. */
  loaded: boolean;
  refresh(): Promise<void>;
}

const STATUS_KEY = 'status';

export function readCachedStatus(): Status {
  try {
    const raw = localStorage.getItem(STATUS_KEY);
    return raw ? (JSON.parse(raw) as Status) : {};
  } catch {
    return {};
  }
}

/** Writes the status object and its individually cached fields (new-api-compat.md §11.4). */
export function storeStatus(s: Status): void {
  localStorage.setItem(STATUS_KEY, JSON.stringify(s));
  const put = (key: string, v: unknown) => {
    if (v === undefined || v === null) localStorage.removeItem(key);
    else localStorage.setItem(key, typeof v === 'string' ? v : JSON.stringify(v));
  };
  put('system_name', s.system_name);
  put('logo', s.logo);
  put('footer_html', s.footer_html);
  put('quota_per_unit', s.quota_per_unit);
  put('display_in_currency', s.display_in_currency);
  put('enable_drawing', s.enable_drawing);
  put('enable_task', s.enable_task);
  put('enable_data_export', s.enable_data_export);
  put('data_export_default_time', s.data_export_default_time);
  put('default_collapse_sidebar', s.default_collapse_sidebar);
  put('mj_notify_enabled', s.mj_notify_enabled);
  put('chats', s.chats);
  put('docs_link', s.docs_link);
  put('chat_link', s.chat_link);
  // chat_link2 is legacy in new-api: drop any stale copy.
  localStorage.removeItem('chat_link2');
}

const StatusContext = createContext<StatusContextValue | null>(null);

declare global {
  interface Window {
    /** index.html's early /api/status call: its envelope, or null when it failed (then asked again, with toasts) */
    __statusPrefetch?: Promise<Envelope<Status> | null>;
  }
}

/** The answer of index.html's early /api/status call, once: later refreshes ask the server. */
export async function takePrefetchedStatus(): Promise<Envelope<Status> | null> {
  const early = window.__statusPrefetch;
  window.__statusPrefetch = undefined;
  const res = early ? await early : null;
  return res && typeof res === 'object' && 'success' in res ? res : null;
}

export function StatusProvider({ children, initial }: { children: ReactNode; initial?: Status }) {
  const [status, setStatus] = useState<Status>(() => initial ?? readCachedStatus());
  const [loaded, setLoaded] = useState(!!initial);

  const refresh = useCallback(async () => {
    try {
      const early = window.__statusPrefetch ? await takePrefetchedStatus() : null;
      const res = early ?? (await api.get<Status>('/api/status'));
      if (res.success && res.data) {
        storeStatus(res.data);
        setStatus(res.data);
        if (res.data.system_name) document.title = res.data.system_name;
      }
    } catch {
      /* api already toasted */
    } finally {
      setLoaded(true);
    }
  }, []);

  useEffect(() => {
    if (!initial) void refresh();
  }, [initial, refresh]);

  const value = useMemo(() => ({ status, loaded, refresh }), [status, loaded, refresh]);
  return <StatusContext.Provider value={value}>{children}</StatusContext.Provider>;
}

export function useStatus(): StatusContextValue {
  const ctx = useContext(StatusContext);
  if (!ctx) throw new Error('useStatus must be used inside <StatusProvider>');
  return ctx;
}
