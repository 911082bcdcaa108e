// Loads the key a chat link is opened with: the caller's first usable token (links.ts firstUsableKey). With none, the
// console says so and opens /token after 1.5 s (spec §8 "Chat").
import { useEffect, useState } from 'react';
import { useNavigate } from 'react-router';
import { useTranslation } from 'react-i18next';
import { api } from '../../lib/api.js';
import { message } from '../../lib/feedback.js';
import { firstUsableKey, type TokenRow } from './links.js';
import { NS } from './i18n.js';

export const NO_TOKEN_REDIRECT_MS = 1500;

export type ChatKeyState = { state: 'loading' } | { state: 'none' } | { state: 'ready'; key: string };

/** `enabled` false skips the request (the page already knows it cannot open a link). */
export function useChatKey(enabled: boolean): ChatKeyState {
  const { t } = useTranslation(NS);
  const navigate = useNavigate();
  const [result, setResult] = useState<ChatKeyState>({ state: 'loading' });

  useEffect(() => {
    if (!enabled) return;
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    void (async () => {
      let key: string | null = null;
      try {
        // new-api reads one page of up to 100 tokens, newest first
        const res = await api.get<TokenRow[]>('/api/token/', { p: 0, size: 100 });
        if (res.success && Array.isArray(res.data)) key = firstUsableKey(res.data);
      } catch {
        /* the client already toasted */
      }
      if (cancelled) return;
      if (key) {
        setResult({ state: 'ready', key });
        return;
      }
      setResult({ state: 'none' });
      void message.error(t('noToken'));
      timer = setTimeout(() => navigate('/token'), NO_TOKEN_REDIRECT_MS);
    })();
    return () => {
      cancelled = true;
      if (timer) clearTimeout(timer);
    };
  }, [enabled, navigate, t]);

  return result;
}
