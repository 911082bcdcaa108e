// Cloudflare Turnstile for the pages the server guards with it (login, register, email verification, password reset).
// When /api/status says `turnstile_check`, the server refuses those calls without a `turnstile` query parameter
// holding a fresh widget token; without this widget nobody could log in. Cloudflare's script is loaded only then.
// Tokens are single-use: a page resets the widget after every call that sent one, and the widget then issues a new
// token by itself.
import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { App } from 'antd';
import { useTranslation } from 'react-i18next';
import { useStatus } from '../../context/status.js';

export const TURNSTILE_SCRIPT_URL = 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit';

interface RenderOptions {
  sitekey: string;
  callback: (token: string) => void;
  'expired-callback'?: () => void;
  'error-callback'?: () => void;
}

/** The part of Cloudflare's `window.turnstile` used here. */
export interface TurnstileApi {
  render(container: HTMLElement, options: RenderOptions): string | undefined;
  reset(widgetId?: string): void;
  remove(widgetId?: string): void;
}

declare global {
  interface Window {
    turnstile?: TurnstileApi;
  }
}

let loading: Promise<TurnstileApi> | null = null;

/** Loads Cloudflare's script once per page (or uses a `window.turnstile` already there). */
export function loadTurnstile(): Promise<TurnstileApi> {
  if (window.turnstile) return Promise.resolve(window.turnstile);
  if (!loading) {
    loading = new Promise<TurnstileApi>((resolve, reject) => {
      const script = document.createElement('script');
      script.src = TURNSTILE_SCRIPT_URL;
      script.async = true;
      script.onload = () =>
        window.turnstile ? resolve(window.turnstile) : reject(new Error('turnstile did not load'));
      script.onerror = () => reject(new Error('turnstile did not load'));
      document.head.appendChild(script);
    }).catch((err: unknown) => {
      loading = null; // a later page may try again
      throw err;
    });
  }
  return loading;
}

interface WidgetProps {
  siteKey: string;
  onToken(token: string): void;
  /** bumped by the page to ask for a fresh token */
  generation: number;
}

function TurnstileWidget({ siteKey, onToken, generation }: WidgetProps) {
  const box = useRef<HTMLDivElement>(null);
  const widget = useRef<{ api: TurnstileApi; id: string | undefined } | null>(null);
  const tokenSink = useRef(onToken);
  tokenSink.current = onToken;

  useEffect(() => {
    let gone = false;
    void loadTurnstile()
      .then((api) => {
        if (gone || !box.current) return;
        const id = api.render(box.current, {
          sitekey: siteKey,
          callback: (token) => tokenSink.current(token),
          'expired-callback': () => tokenSink.current(''),
          'error-callback': () => tokenSink.current(''),
        });
        widget.current = { api, id };
      })
      .catch(() => undefined); // the submit stays disabled: nothing the server would accept can be sent
    return () => {
      gone = true;
      const w = widget.current;
      widget.current = null;
      if (w) w.api.remove(w.id);
    };
  }, [siteKey]);

  useEffect(() => {
    const w = widget.current;
    if (generation > 0 && w) w.api.reset(w.id);
  }, [generation]);

  return (
    <div ref={box} data-testid="turnstile" style={{ display: 'flex', justifyContent: 'center', marginBottom: 16 }} />
  );
}

export interface Turnstile {
  /** the server wants a token on the guarded calls */
  required: boolean;
  /** a token is there, or none is needed */
  ready: boolean;
  /**
   * Call first in a guarded action: true when it may go on; else it says "请稍后几秒重试，Turnstile 正在检查用户环境！"
   * (spec §5, new-api's pages) and returns false. The buttons stay enabled, as new-api's.
   */
  check(): boolean;
  /** the widget to place in the form (null when Turnstile is off) */
  widget: ReactNode;
  /** query parameters to add to a guarded call: `{turnstile: token}`, or none when Turnstile is off */
  params(): Record<string, string>;
  /** `path` with the token as its `turnstile` query parameter, for guarded POSTs */
  withToken(path: string): string;
  /** drops the spent token and asks the widget for a new one; call after every guarded call that sent it */
  reset(): void;
}

export function useTurnstile(): Turnstile {
  const { status } = useStatus();
  const siteKey = status.turnstile_site_key ?? '';
  const required = !!status.turnstile_check && siteKey !== '';
  const [token, setToken] = useState('');
  const [generation, setGeneration] = useState(0);
  const { message } = App.useApp();
  const { t } = useTranslation();
  const ready = !required || token !== '';
  const check = useCallback(() => {
    if (!ready) void message.info(t('turnstile.wait'));
    return ready;
  }, [ready, message, t]);

  const reset = useCallback(() => {
    setToken('');
    setGeneration((g) => g + 1);
  }, []);
  const params = useCallback(
    (): Record<string, string> => (required && token ? { turnstile: token } : {}),
    [required, token],
  );
  const withToken = useCallback(
    (path: string) =>
      required && token ? `${path}${path.includes('?') ? '&' : '?'}turnstile=${encodeURIComponent(token)}` : path,
    [required, token],
  );

  return {
    required,
    ready,
    check,
    widget: required ? <TurnstileWidget siteKey={siteKey} onToken={setToken} generation={generation} /> : null,
    params,
    withToken,
    reset,
  };
}
