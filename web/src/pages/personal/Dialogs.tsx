// Dialogs of the personal page: email binding, password change, account deletion, referral transfer.
import { useState } from 'react';
import { Alert, Button, Input, InputNumber, Modal, Space, Typography } from 'antd';
import { message } from '../../lib/feedback.js';
import { useTranslation } from 'react-i18next';
import { api } from '../../lib/api.js';
import { quotaPerUnit, renderQuota } from '../../lib/render.js';
import { useCountdown } from '../auth/useCountdown.js';
import { useTurnstile } from '../../components/turnstile/index.js';
import { clearDefaultPasswordWarning } from '../../components/default-password/index.js';
import { NS } from './i18n.js';

interface DialogProps {
  open: boolean;
  onClose(): void;
  onDone(): void;
}

export function EmailBindDialog({ open, onClose, onDone }: DialogProps) {
  const { t } = useTranslation(NS);
  const [email, setEmail] = useState('');
  const [code, setCode] = useState('');
  const [loading, setLoading] = useState(false);
  const countdown = useCountdown();
  const turnstile = useTurnstile();

  const send = async () => {
    if (!turnstile.check()) return;
    if (!email.trim()) return void message.error(t('emailRequired'));
    try {
      const res = await api.get('/api/verification', { email: email.trim(), ...turnstile.params() });
      if (res.success) {
        void message.success(t('codeSent'));
        countdown.start(30);
      } else void message.error(res.message);
    } finally {
      turnstile.reset();
    }
  };
  const bind = async () => {
    if (!email.trim()) return void message.error(t('emailRequired'));
    if (!code.trim()) return void message.error(t('codeRequired'));
    setLoading(true);
    try {
      const res = await api.get('/api/oauth/email/bind', { email: email.trim(), code: code.trim() });
      if (res.success) {
        void message.success(t('emailBound'));
        onDone();
        onClose();
      } else void message.error(res.message);
    } finally {
      setLoading(false);
    }
  };
  return (
    <Modal open={open} title={t('bindEmail')} onCancel={onClose} onOk={bind} confirmLoading={loading} destroyOnHidden>
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

export function ChangePasswordDialog({ open, onClose, onDone }: DialogProps) {
  const { t } = useTranslation(NS);
  const [original, setOriginal] = useState('');
  const [pw, setPw] = useState('');
  const [pw2, setPw2] = useState('');
  const [loading, setLoading] = useState(false);
  const submit = async () => {
    if (!original) return void message.error(t('originalPasswordRequired'));
    if (pw.length < 8) return void message.error(t('passwordShort'));
    if (pw !== pw2) return void message.error(t('passwordMismatch'));
    setLoading(true);
    try {
      const res = await api.put('/api/user/self', { password: pw, original_password: original });
      if (res.success) {
        void message.success(t('passwordChanged'));
        clearDefaultPasswordWarning();
        setOriginal('');
        setPw('');
        setPw2('');
        onDone();
        onClose();
      } else void message.error(res.message);
    } finally {
      setLoading(false);
    }
  };
  return (
    <Modal open={open} title={t('changePassword')} onCancel={onClose} onOk={submit} confirmLoading={loading}>
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

export function DeleteAccountDialog({ open, onClose, onDone, username }: DialogProps & { username: string }) {
  const { t } = useTranslation(NS);
  const [typed, setTyped] = useState('');
  const [loading, setLoading] = useState(false);
  const submit = async () => {
    if (typed !== username) return void message.error(t('deleteMismatch'));
    setLoading(true);
    try {
      const res = await api.del('/api/user/self');
      if (res.success) {
        void message.success(t('deleted'));
        onDone();
      } else void message.error(res.message);
    } finally {
      setLoading(false);
    }
  };
  return (
    <Modal
      open={open}
      title={t('deleteAccount')}
      onCancel={onClose}
      onOk={submit}
      confirmLoading={loading}
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

export function TransferDialog({ open, onClose, onDone, affQuota }: DialogProps & { affQuota: number }) {
  const { t } = useTranslation(NS);
  const min = quotaPerUnit();
  const [amount, setAmount] = useState<number | null>(min);
  const [loading, setLoading] = useState(false);
  const submit = async () => {
    if (!amount || amount < min) return void message.error(t('transferTooSmall', { quota: renderQuota(min) }));
    setLoading(true);
    try {
      const res = await api.post('/api/user/aff_transfer', { quota: amount });
      if (res.success) {
        void message.success(res.message || t('transferDone'));
        onDone();
        onClose();
      } else void message.error(res.message);
    } finally {
      setLoading(false);
    }
  };
  return (
    <Modal open={open} title={t('transfer')} onCancel={onClose} onOk={submit} confirmLoading={loading}>
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
