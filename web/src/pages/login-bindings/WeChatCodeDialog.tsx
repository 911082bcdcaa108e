// The WeChat dialog of new-api's console: the official account's QR code to scan, and the code it replies with.
import { useState } from 'react';
import { Flex, Input, Modal, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { message } from '../../lib/feedback.js';
import { useStatus } from '../../context/status.js';
import { NS } from './i18n.js';

interface Props {
  open: boolean;
  title: string;
  okText: string;
  onClose(): void;
  /** sends the code; resolves once the dialog may close (true) or should stay for another try (false) */
  onSubmit(code: string): Promise<boolean>;
}

export default function WeChatCodeDialog({ open, title, okText, onClose, onSubmit }: Props) {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async () => {
    if (!code.trim()) return void message.error(t('codeEmpty'));
    setBusy(true);
    try {
      if (await onSubmit(code.trim())) {
        setCode('');
        onClose();
      }
    } catch {
      /* toasted by the client */
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal
      open={open}
      title={title}
      okText={okText}
      confirmLoading={busy}
      onOk={() => void submit()}
      onCancel={onClose}
      destroyOnHidden
    >
      <Flex vertical align="center" gap={12} data-testid="wechat-dialog">
        {status.wechat_qrcode ? (
          // a plain <img>: antd's Image (its previewer) would add 18 kB to the login page's load
          <img src={status.wechat_qrcode} width={200} alt="WeChat QR code" />
        ) : null}
        <Typography.Text type="secondary">{t('wechatScan')}</Typography.Text>
        <Input
          value={code}
          placeholder={t('codePh')}
          onChange={(e) => setCode(e.target.value)}
          onPressEnter={() => void submit()}
          data-testid="wechat-code"
        />
      </Flex>
    </Modal>
  );
}
