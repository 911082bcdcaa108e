// The batch tag dialog (spec §5 batch): one tag for every selected channel.
import { useTranslation } from 'react-i18next';
import { Input, Modal, Typography } from 'antd';
import { quiet } from '../../components/quiet.js';

export default function BatchTagModal(props: {
  open: boolean;
  count: number;
  value: string;
  onChange(value: string): void;
  onCancel(): void;
  onSubmit(): Promise<void>;
}) {
  const { open, count, value, onChange, onCancel, onSubmit } = props;
  const { t } = useTranslation('channel');
  return (
    <Modal
      open={open}
      title={t('batchTag.title')}
      onCancel={onCancel}
      onOk={() => quiet(onSubmit())}
      okText={t('action.confirm')}
      cancelText={t('action.cancel')}
    >
      <Typography.Paragraph>{t('batchTag.hint', { count })}</Typography.Paragraph>
      <Input value={value} onChange={(e) => onChange(e.target.value)} placeholder={t('batchTag.placeholder')} />
    </Modal>
  );
}
