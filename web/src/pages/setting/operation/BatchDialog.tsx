// Batch set a price or ratios on the selected models (spec §5 Pricing tables messages).
// Props:
//   open: boolean; rows: ModelRow[]; selected: string[] (model names)
//   onClose(): void; onApply(rows: ModelRow[]): void
import { useEffect, useState } from 'react';
import { App, Form, Input, Modal, Select, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { applyBatch, type BatchField, type ModelRow } from '../ratioLogic.js';
import { NS } from '../i18n.js';

export interface BatchDialogProps {
  open: boolean;
  rows: ModelRow[];
  selected: string[];
  onClose(): void;
  onApply(rows: ModelRow[]): void;
}

export default function BatchDialog({ open, rows, selected, onClose, onApply }: BatchDialogProps) {
  const { t } = useTranslation(NS);
  const { message } = App.useApp();
  const [field, setField] = useState<BatchField>('ratio');
  const [value, setValue] = useState('');
  const [completion, setCompletion] = useState('');

  useEffect(() => {
    if (open) {
      setValue('');
      setCompletion('');
    }
  }, [open]);

  const ok = () => {
    const res = applyBatch(rows, selected, field, value, completion);
    if (res.error) {
      void message.error(t(`batch.err.${res.error}`));
      return;
    }
    onApply(res.rows);
  };

  return (
    <Modal
      open={open}
      title={t('batch.title')}
      onCancel={onClose}
      onOk={ok}
      okText={t('common:action.ok')}
      cancelText={t('common:action.cancel')}
    >
      <Typography.Paragraph type="secondary">{t('batch.selected', { count: selected.length })}</Typography.Paragraph>
      <Form layout="vertical" data-testid="batch-dialog">
        <Form.Item label={t('batch.field')}>
          <Select<BatchField>
            value={field}
            onChange={setField}
            options={[
              { value: 'price', label: t('ratio.price') },
              { value: 'ratio', label: t('ratio.ratio') },
              { value: 'completionRatio', label: t('ratio.completionRatio') },
              { value: 'both', label: t('batch.both') },
            ]}
          />
        </Form.Item>
        <Form.Item
          label={field === 'both' ? t('ratio.ratio') : t('batch.value')}
          extra={field === 'price' ? t('batch.priceHint') : undefined}
        >
          <Input value={value} onChange={(e) => setValue(e.target.value)} data-testid="batch-value" />
        </Form.Item>
        {field === 'both' ? (
          <Form.Item label={t('ratio.completionRatio')}>
            <Input value={completion} onChange={(e) => setCompletion(e.target.value)} data-testid="batch-completion" />
          </Form.Item>
        ) : null}
      </Form>
    </Modal>
  );
}
