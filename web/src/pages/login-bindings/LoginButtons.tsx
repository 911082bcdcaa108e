// WeChat and Telegram on the login page, beside the OAuth buttons (pages/oauth/OAuthButtons.tsx): a WeChat button
// opening the QR code + code dialog, and Telegram's own widget. Both log in as the password form does (Telegram through
// the /oauth/telegram return page, pages/oauth/Callback.tsx).
import { useState } from 'react';
import { Button } from 'antd';
import { WechatOutlined } from '@ant-design/icons';
import { useMutation } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { api } from '../../lib/api.js';
import { message } from '../../lib/feedback.js';
import { useStatus, type Status } from '../../context/status.js';
import { useUser, type StoredUser } from '../../context/user.js';
import WeChatCodeDialog from './WeChatCodeDialog.js';
import TelegramWidget from './TelegramWidget.js';
import { NS } from './i18n.js';

export const wechatLoginOn = (s: Status) => !!s.wechat_login;
export const telegramLoginOn = (s: Status) => !!s.telegram_oauth && !!s.telegram_bot_name;

/** Whether the login page has any of these to show. */
export function extraLoginsOn(s: Status): boolean {
  return wechatLoginOn(s) || telegramLoginOn(s);
}

function useLoggedIn() {
  const { t } = useTranslation(NS);
  const { setUser } = useUser();
  const navigate = useNavigate();
  return (res: { success: boolean; message: string; data: StoredUser }) => {
    if (!res.success) {
      void message.error(res.message);
      return false;
    }
    setUser(res.data);
    void message.success(t('loginSuccess'));
    navigate('/token');
    return true;
  };
}

export default function ExtraLoginButtons() {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  const [wechatOpen, setWechatOpen] = useState(false);
  const loggedIn = useLoggedIn();

  const wechat = useMutation({
    mutationFn: (code: string) => api.get<StoredUser>('/api/oauth/wechat', { code }),
  });
  const wechatLogin = async (code: string) => loggedIn(await wechat.mutateAsync(code));

  return (
    <>
      {wechatLoginOn(status) ? (
        <Button
          icon={<WechatOutlined />}
          aria-label={t('wechatLogin')}
          data-testid="login-wechat"
          onClick={() => setWechatOpen(true)}
        >
          {t('wechat')}
        </Button>
      ) : null}
      {telegramLoginOn(status) ? (
        <TelegramWidget botName={status.telegram_bot_name ?? ''} authUrl={`${window.location.origin}/oauth/telegram`} />
      ) : null}
      <WeChatCodeDialog
        open={wechatOpen}
        title={t('wechatLogin')}
        okText={t('login')}
        onClose={() => setWechatOpen(false)}
        onSubmit={wechatLogin}
      />
    </>
  );
}
