// The binding actions of personal settings: bind WeChat (QR code + code dialog) or Telegram (its widget, which sends
// the browser to /api/oauth/telegram/bind and back), and the unbind button, with a confirm, beside every bound login.
// A user may unbind only while another way to sign in remains; the server says so when not (new-api-compat.md §9.4).
import { useState, type ReactNode } from 'react';
import { Button, Modal, Popconfirm, Space, Typography } from 'antd';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { api } from '../../lib/api.js';
import { message } from '../../lib/feedback.js';
import { SELF_KEY } from '../../lib/self.js';
import { useStatus } from '../../context/status.js';
import WeChatCodeDialog from './WeChatCodeDialog.js';
import TelegramWidget from './TelegramWidget.js';
import { NS } from './i18n.js';

export type BindingType = 'github' | 'linuxdo' | 'discord' | 'oidc' | 'wechat' | 'telegram' | 'email';

interface UnbindProps {
  type: BindingType;
  /** the name in the confirm */
  name: string;
}

export function UnbindButton({ type, name }: UnbindProps) {
  const { t } = useTranslation(NS);
  const qc = useQueryClient();
  const unbind = useMutation({
    mutationFn: () => api.del(`/api/user/self/bindings/${type}`),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      void message.success(t('unbindDone'));
      // the bindings are fields of the caller's own user
      return qc.invalidateQueries({ queryKey: SELF_KEY });
    },
  });
  return (
    // a thrown call was toasted by the client
    <Popconfirm title={t('unbindConfirm', { name })} onConfirm={() => unbind.mutateAsync().catch(() => undefined)}>
      <Button size="small" danger loading={unbind.isPending} data-testid={`unbind-${type}`}>
        {t('unbind')}
      </Button>
    </Popconfirm>
  );
}

/** A binding row's action (`children`: its bind button) followed by the unbind button while it is bound. */
export function WithUnbind({ children, bound, ...unbind }: UnbindProps & { bound: boolean; children?: ReactNode }) {
  return (
    <Space size={4}>
      {children}
      {bound ? <UnbindButton {...unbind} /> : null}
    </Space>
  );
}

export function WeChatBindButton({ bound }: { bound: boolean }) {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const bindWechat = useMutation({
    mutationFn: (code: string) => api.post('/api/oauth/wechat/bind', { code }),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      void message.success(t('bindSuccess'));
      return qc.invalidateQueries({ queryKey: SELF_KEY });
    },
  });
  // the dialog stays open for another try when the server refused the code
  const bind = async (code: string) => (await bindWechat.mutateAsync(code)).success;
  return (
    <>
      <Button
        size="small"
        disabled={bound || !status.wechat_login}
        data-testid="bind-wechat"
        onClick={() => setOpen(true)}
      >
        {bound ? t('bound') : t('bind')}
      </Button>
      <WeChatCodeDialog
        open={open}
        title={t('wechatBind')}
        okText={t('bind')}
        onClose={() => setOpen(false)}
        onSubmit={bind}
      />
    </>
  );
}

export function TelegramBindButton({ bound }: { bound: boolean }) {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  const [open, setOpen] = useState(false);
  const bot = status.telegram_bot_name ?? '';
  return (
    <>
      <Button
        size="small"
        disabled={bound || !status.telegram_oauth}
        data-testid="bind-telegram"
        onClick={() => setOpen(true)}
      >
        {bound ? t('bound') : t('bind')}
      </Button>
      <Modal open={open} title="Telegram" footer={null} onCancel={() => setOpen(false)} destroyOnHidden>
        <Typography.Paragraph type="secondary">{bot ? t('telegramBindHint') : t('telegramNoBot')}</Typography.Paragraph>
        {bot ? <TelegramWidget botName={bot} authUrl={`${window.location.origin}/api/oauth/telegram/bind`} /> : null}
      </Modal>
    </>
  );
}
