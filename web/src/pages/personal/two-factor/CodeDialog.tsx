// Asks for a code before an action that needs the second factor (disable, regenerate backup codes).
import { useState } from 'react';
import { Input, Modal, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { message } from '../../../lib/feedback.js';
import { NS } from './i18n.js';

interface Props {
  open: boolean;
  title: string;
  hint: string;
  /** backup codes are accepted (disable) or not (regenerate) */
  acceptsBackupCode: boolean;
  onClose(): void;
  /** runs the action; resolves true when it succeeded */
  onSubmit(code: string): Promise<boolean>;
}

export default function CodeDialog({ open, title, hint, acceptsBackupCode, onClose, onSubmit }: Props) {
  const { t } = useTranslation(NS);
  const [code, setCode] = useState('');
  const [loading, setLoading] = useState(false);
  const submit = async () => {
    if (!code.trim()) return void message.error(t('codeRequired'));
    setLoading(true);
    try {
      if (await onSubmit(code.trim())) {
        setCode('');
        onClose();
      }
    } finally {
      setLoading(false);
    }
  };
  return (
    <Modal
      open={open}
      title={title}
      onCancel={onClose}
      onOk={() => void submit()}
      okText={t('confirm')}
      confirmLoading={loading}
      destroyOnHidden
    >
      <Typography.Paragraph>{hint}</Typography.Paragraph>
      <Input
        autoFocus
        value={code}
        onChange={(e) => setCode(e.target.value)}
        onPressEnter={() => void submit()}
        placeholder={acceptsBackupCode ? t('codeOrBackupPh') : t('codePh')}
        autoComplete="one-time-code"
        data-testid="twofa-dialog-code"
      />
    </Modal>
  );
}
