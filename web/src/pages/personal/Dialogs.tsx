// Dialogs of the personal page: email binding, password change, account deletion, referral transfer.
import { useState } from 'react';
import { Alert, Button, Input, InputNumber, Modal, Space, Typography } from 'antd';
import { message } from '../../lib/feedback.js';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { api } from '../../lib/api.js';
import { quotaPerUnit, renderQuota } from '../../lib/render.js';
import { SELF_KEY } from '../../lib/self.js';
import { useCountdown } from '../auth/useCountdown.js';
import { useTurnstile } from '../../components/turnstile/index.js';
import { clearDefaultPasswordWarning } from '../../components/default-password/index.js';
import { NS } from './i18n.js';

interface DialogProps {
  open: boolean;
  onClose(): void;
}

/** The mutations below change the caller's own user: its query is invalidated after each success. */
function useReloadSelf() {
  const qc = useQueryClient();
  return () => qc.invalidateQueries({ queryKey: SELF_KEY });
}

/** A failed call was toasted by the api client; the dialog only stops waiting. */
const toasted = () => undefined;

export function EmailBindDialog({ open, onClose }: DialogProps) {
  const { t } = useTranslation(NS);
  const [email, setEmail] = useState('');
  const [code, setCode] = useState('');
  const countdown = useCountdown();
  const turnstile = useTurnstile();
  const reloadSelf = useReloadSelf();

  const sendCode = useMutation({
    mutationFn: (params: Record<string, string>) => api.get('/api/verification', params),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      void message.success(t('codeSent'));
      countdown.start(30);
    },
    // a Turnstile token is good for one request
    onSettled: () => turnstile.reset(),
  });
  const bindEmail = useMutation({
    mutationFn: (params: { email: string; code: string }) => api.get('/api/oauth/email/bind', params),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      void message.success(t('emailBound'));
      onClose();
      return reloadSelf();
    },
  });

  const send = () => {
    if (!turnstile.check()) return;
    if (!email.trim()) return void message.error(t('emailRequired'));
    sendCode.mutateAsync({ email: email.trim(), ...turnstile.params() }).catch(toasted);
  };
  const bind = () => {
    if (!email.trim()) return void message.error(t('emailRequired'));
    if (!code.trim()) return void message.error(t('codeRequired'));
    bindEmail.mutateAsync({ email: email.trim(), code: code.trim() }).catch(toasted);
  };
  return (
    <Modal
      open={open}
      title={t('bindEmail')}
      onCancel={onClose}
      onOk={bind}
      confirmLoading={bindEmail.isPending}
      destroyOnHidden
    >
      <Space direction="vertical" style={{ width: '100%' }}>
        <Space.Compact style={{ width: '100%' }}>
          <Input placeholder={t('emailPh')} value={email} onChange={(e) => setEmail(e.target.value)} type="email" />
          <Button onClick={send} disabled={countdown.left > 0}>
            {countdown.left > 0 ? t('resendIn', { n: countdown.left }) : t('sendCode')}
          </Button>
        </Space.Compact>
        <Input placeholder={t('codePh')} value={code} onChange={(e) => setCode(e.target.value)} />
        {turnstile.widget}
      </Space>
    </Modal>
  );
}

export function ChangePasswordDialog({ open, onClose }: DialogProps) {
  const { t } = useTranslation(NS);
  const [original, setOriginal] = useState('');
  const [pw, setPw] = useState('');
  const [pw2, setPw2] = useState('');
  const reloadSelf = useReloadSelf();
  const change = useMutation({
    mutationFn: (body: { password: string; original_password: string }) => api.put('/api/user/self', body),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      void message.success(t('passwordChanged'));
      clearDefaultPasswordWarning();
      setOriginal('');
      setPw('');
      setPw2('');
      onClose();
      return reloadSelf();
    },
  });
  const submit = () => {
    if (!original) return void message.error(t('originalPasswordRequired'));
    if (pw.length < 8) return void message.error(t('passwordShort'));
    if (pw !== pw2) return void message.error(t('passwordMismatch'));
    change.mutateAsync({ password: pw, original_password: original }).catch(toasted);
  };
  return (
    <Modal open={open} title={t('changePassword')} onCancel={onClose} onOk={submit} confirmLoading={change.isPending}>
      <Space direction="vertical" style={{ width: '100%' }}>
        <Input.Password
          placeholder={t('originalPasswordPh')}
          value={original}
          onChange={(e) => setOriginal(e.target.value)}
          maxLength={20}
        />
        <Input.Password
          placeholder={t('newPasswordPh')}
          value={pw}
          onChange={(e) => setPw(e.target.value)}
          maxLength={20}
        />
        <Input.Password
          placeholder={t('newPassword2Ph')}
          value={pw2}
          onChange={(e) => setPw2(e.target.value)}
          maxLength={20}
        />
      </Space>
    </Modal>
  );
}

export function DeleteAccountDialog({
  open,
  onClose,
  onDeleted,
  username,
}: DialogProps & { username: string; onDeleted(): void }) {
  const { t } = useTranslation(NS);
  const [typed, setTyped] = useState('');
  const remove = useMutation({
    mutationFn: () => api.del('/api/user/self'),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      void message.success(t('deleted'));
      onDeleted();
    },
  });
  const submit = () => {
    if (typed !== username) return void message.error(t('deleteMismatch'));
    remove.mutateAsync().catch(toasted);
  };
  return (
    <Modal
      open={open}
      title={t('deleteAccount')}
      onCancel={onClose}
      onOk={submit}
      confirmLoading={remove.isPending}
      okButtonProps={{ danger: true, disabled: typed !== username }}
    >
      <Alert type="error" showIcon title={t('deleteWarn')} style={{ marginBottom: 12 }} />
      <Input
        placeholder={t('deleteConfirmPh', { username })}
        value={typed}
        onChange={(e) => setTyped(e.target.value)}
      />
    </Modal>
  );
}

export function TransferDialog({ open, onClose, affQuota }: DialogProps & { affQuota: number }) {
  const { t } = useTranslation(NS);
  const min = quotaPerUnit();
  const [amount, setAmount] = useState<number | null>(min);
  const reloadSelf = useReloadSelf();
  const transfer = useMutation({
    mutationFn: (quota: number) => api.post('/api/user/aff_transfer', { quota }),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      void message.success(res.message || t('transferDone'));
      onClose();
      return reloadSelf();
    },
  });
  const submit = () => {
    if (!amount || amount < min) return void message.error(t('transferTooSmall', { quota: renderQuota(min) }));
    transfer.mutateAsync(amount).catch(toasted);
  };
  return (
    <Modal open={open} title={t('transfer')} onCancel={onClose} onOk={submit} confirmLoading={transfer.isPending}>
      <Typography.Paragraph>{t('transferAvailable', { quota: renderQuota(affQuota) })}</Typography.Paragraph>
      <Typography.Paragraph type="secondary">{t('transferMin', { quota: renderQuota(min) })}</Typography.Paragraph>
      <InputNumber
        style={{ width: '100%' }}
        min={min}
        max={Math.max(min, affQuota)}
        step={min}
        value={amount}
        onChange={(v) => setAmount(v)}
        placeholder={t('transferTitle')}
      />
    </Modal>
  );
}
