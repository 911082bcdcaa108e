// Telegram's Login Widget (https://core.telegram.org/widgets/login), as new-api's console embeds it through
// react-telegram-login: a <script> from telegram.org with data-telegram-login=<bot> that renders the button in an
// iframe. With `authUrl` the widget sends the browser there with the signed fields (binding: the server answers 302
// back to the console); with `onAuth` it calls a global function with them (login: the page calls the API).
import { useEffect, useRef } from 'react';

export const TELEGRAM_WIDGET_URL = 'https://telegram.org/js/telegram-widget.js?22';

/** The fields the widget signs, as it hands them over. */
export interface TelegramAuthUser {
  id: number | string;
  first_name?: string;
  last_name?: string;
  username?: string;
  photo_url?: string;
  auth_date: number | string;
  hash: string;
  [field: string]: unknown;
}

declare global {
  interface Window {
    [callback: `onTelegramAuth_${number}`]: ((user: TelegramAuthUser) => void) | undefined;
  }
}

let widgets = 0;

interface Props {
  botName: string;
  authUrl?: string;
  onAuth?(user: TelegramAuthUser): void;
}

export default function TelegramWidget({ botName, authUrl, onAuth }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const authSink = useRef(onAuth);
  authSink.current = onAuth;

  useEffect(() => {
    const container = box.current;
    if (!container || !botName) return;
    const callback = `onTelegramAuth_${++widgets}` as const;
    const script = document.createElement('script');
    script.src = TELEGRAM_WIDGET_URL;
    script.async = true;
    script.setAttribute('data-telegram-login', botName);
    script.setAttribute('data-size', 'large');
    script.setAttribute('data-request-access', 'write');
    if (authUrl) {
      script.setAttribute('data-auth-url', authUrl);
    } else {
      window[callback] = (user) => authSink.current?.(user);
      script.setAttribute('data-onauth', `${callback}(user)`);
    }
    container.appendChild(script);
    return () => {
      delete window[callback];
      container.replaceChildren();
    };
  }, [botName, authUrl]);

  return <div ref={box} data-testid="telegram-widget" style={{ display: 'inline-block' }} />;
}

/** The query new-api's console sends to /api/oauth/telegram/login: the widget's fields that are set. */
export function telegramParams(user: TelegramAuthUser): Record<string, string> {
  const fields = ['id', 'first_name', 'last_name', 'username', 'photo_url', 'auth_date', 'hash', 'lang'];
  const params: Record<string, string> = {};
  for (const f of fields) {
    const v = user[f];
    if (v !== undefined && v !== null && v !== '') params[f] = String(v);
  }
  return params;
}
