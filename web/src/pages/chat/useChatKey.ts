// Loads the key a chat link is opened with: the caller's first usable token (links.ts firstUsableKey). With none, the
// console says so and opens /token after 1.5 s (spec §8 "Chat").
import { useEffect } from 'react';
import { useQuery } from '@tanstack/react-query';
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
  // under the tokens page's key (pages/token): a token created or changed there is seen here
  const tokens = useQuery({
    queryKey: ['tokens', 'chat-key'],
    enabled,
    queryFn: async () => {
      // new-api reads one page of up to 100 tokens, newest first
      const res = await api.get<TokenRow[]>('/api/token/', { p: 0, size: 100 });
      return res.success && Array.isArray(res.data) ? firstUsableKey(res.data) : null;
    },
  });
  const settled = tokens.isSuccess || tokens.isError;
  const key = tokens.data ?? null;
  const result: ChatKeyState = !settled ? { state: 'loading' } : key ? { state: 'ready', key } : { state: 'none' };

  useEffect(() => {
    if (result.state !== 'none') return;
    void message.error(t('noToken'));
    const timer = setTimeout(() => navigate('/token'), NO_TOKEN_REDIRECT_MS);
    return () => clearTimeout(timer);
  }, [result.state, navigate, t]);

  return result;
}
