// OAuth return page (/oauth/:provider, spec §2 "OAuth callback", §4): the provider sent the browser back with code
// and state; the server turns them into a login or, when a session exists, a binding. Telegram's login widget sends the
// browser to /oauth/telegram with its signed fields instead (pages/login-bindings/TelegramWidget.tsx).
import { useEffect, useRef, useState } from 'react';
import { Flex, Spin } from 'antd';
import { useMutation } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { useNavigate, useParams, useSearchParams } from 'react-router';
import { api } from '../../lib/api.js';
import { message } from '../../lib/feedback.js';
import { useUser, type StoredUser } from '../../context/user.js';
import { telegramParams } from '../login-bindings/TelegramWidget.js';
import { NS } from './i18n.js';

/** How long the failure prompt stays before leaving, so it can be read. */
export const FAILURE_REDIRECT_MS = 1500;

export default function OAuthCallback() {
  const { t } = useTranslation(NS);
  const { provider = '' } = useParams();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const { setUser } = useUser();
  const [prompt, setPrompt] = useState(() => t('processing'));
  // A code can be redeemed once: StrictMode's second effect run (and any re-render) must not send it again.
  const sent = useRef(false);
  const failureTimer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(failureTimer.current), []);

  const fail = (text: string) => {
    if (text) void message.error(text);
    setPrompt(t('failedRedirect'));
    failureTimer.current = setTimeout(() => navigate('/setting', { replace: true }), FAILURE_REDIRECT_MS);
  };
  const redeem = useMutation({
    mutationFn: () =>
      provider === 'telegram'
        ? api.get<StoredUser>('/api/oauth/telegram/login', telegramParams(Object.fromEntries(params)))
        : api.get<StoredUser>(`/api/oauth/${encodeURIComponent(provider)}`, {
            code: params.get('code') ?? '',
            state: params.get('state') ?? '',
          }),
    onSuccess: (res) => {
      if (!res.success) return fail(res.message);
      if (res.message === 'bind') {
        void message.success(t('bindSuccess'));
        navigate('/setting', { replace: true });
        return;
      }
      setUser(res.data);
      void message.success(t('loginSuccess'));
      navigate('/token', { replace: true });
    },
    // a thrown call was already toasted by the client; only the prompt and the redirect remain
    onError: () => fail(''),
  });

  useEffect(() => {
    if (sent.current) return;
    sent.current = true;
    redeem.mutate();
    // Runs once per mount by design (see `sent`).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  return (
    <Flex justify="center" align="center" style={{ minHeight: 320 }} data-testid="oauth-callback">
      <Spin size="large" description={prompt}>
        <div style={{ width: 200, height: 80 }} />
      </Spin>
    </Flex>
  );
}
