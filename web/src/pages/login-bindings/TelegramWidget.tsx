// Telegram's Login Widget (https://core.telegram.org/widgets/login), as new-api's console embeds it through
// react-telegram-login: a <script> from telegram.org with data-telegram-login=<bot> that renders the button in an
// iframe. The widget sends the browser to `authUrl` with the signed fields: for a binding the server's route, which
// answers 302 back to the console; for a login the console's /oauth/telegram page, which calls the API. Its other
// mode (`data-onauth`, a callback the widget eval()s) is refused by the console's Content-Security-Policy.
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

interface Props {
  botName: string;
  /** where the widget sends the browser with the signed fields as query parameters */
  authUrl: string;
}

export default function TelegramWidget({ botName, authUrl }: Props) {
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const container = box.current;
    if (!container || !botName) return;
    const script = document.createElement('script');
    script.src = TELEGRAM_WIDGET_URL;
    script.async = true;
    script.setAttribute('data-telegram-login', botName);
    script.setAttribute('data-size', 'large');
    script.setAttribute('data-request-access', 'write');
    script.setAttribute('data-auth-url', authUrl);
    container.appendChild(script);
    return () => container.replaceChildren();
  }, [botName, authUrl]);

  return <div ref={box} data-testid="telegram-widget" style={{ display: 'inline-block' }} />;
}

/** The query new-api's console sends to /api/oauth/telegram/login: the widget's fields that are set. */
export function telegramParams(user: TelegramAuthUser | Record<string, string>): Record<string, string> {
  const fields = ['id', 'first_name', 'last_name', 'username', 'photo_url', 'auth_date', 'hash', 'lang'];
  const params: Record<string, string> = {};
  for (const f of fields) {
    const v = user[f];
    if (v !== undefined && v !== null && v !== '') params[f] = String(v);
  }
  return params;
}
