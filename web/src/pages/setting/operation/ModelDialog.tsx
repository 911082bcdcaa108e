// Add / edit one model's pricing (spec §4 Model pricing mode): per-token (by ratio, or by USD per 1M tokens) or
// per-request (fixed price). Choosing per-request clears the ratios, per-token clears the price; the dialog is in
// add mode whenever the typed name is new.
// Props:
//   open: boolean; row: ModelRow | null (null = add); rows: ModelRow[] (for duplicate checks)
//   onClose(): void; onApply(rows: ModelRow[]): void – the rows with the change applied
import { useEffect, useState } from 'react';
import { App, Form, Input, Modal, Radio } from 'antd';
import { useTranslation } from 'react-i18next';
import { applyDialog, isAddMode, modeOf, type DialogInput, type ModelRow, type PricingMode } from '../ratioLogic.js';
import { NS } from '../i18n.js';

export interface ModelDialogProps {
  open: boolean;
  row: ModelRow | null;
  rows: ModelRow[];
  onClose(): void;
  onApply(rows: ModelRow[]): void;
}

const empty: DialogInput = {
  original: '',
  name: '',
  mode: 'per-token',
  tokenInput: 'ratio',
  price: '',
  ratio: '',
  completionRatio: '',
  inputPrice: '',
  outputPrice: '',
};

export default function ModelDialog({ open, row, rows, onClose, onApply }: ModelDialogProps) {
  const { t } = useTranslation(NS);
  const { message } = App.useApp();
  const [d, setD] = useState<DialogInput>(empty);

  useEffect(() => {
    if (!open) return;
    setD(
      row
        ? {
            ...empty,
            original: row.name,
            name: row.name,
            mode: modeOf(row),
            price: row.price,
            ratio: row.ratio,
            completionRatio: row.completionRatio,
          }
        : empty,
    );
  }, [open, row]);

  const set = (patch: Partial<DialogInput>) => setD((cur) => ({ ...cur, ...patch }));
  const setMode = (mode: PricingMode) =>
    set(
      mode === 'per-request'
        ? { mode, ratio: '', completionRatio: '', inputPrice: '', outputPrice: '' }
        : { mode, price: '' },
    );

  const adding = !d.original || isAddMode(rows, d.name);

  const ok = () => {
    // Renaming to a new name is an add: keep the original row and add the new one.
    const input = adding ? { ...d, original: '' } : d;
    const res = applyDialog(rows, input);
    if (res.error) {
      void message.error(t(`ratio.err.${res.error}`));
      return;
    }
    onApply(res.rows);
  };

  return (
    <Modal
      open={open}
      title={adding ? t('ratio.addTitle') : t('ratio.editTitle')}
      onCancel={onClose}
      onOk={ok}
      okText={t('common:action.ok')}
      cancelText={t('common:action.cancel')}
      destroyOnHidden
    >
      <Form layout="vertical" data-testid="model-dialog">
        <Form.Item label={t('ratio.name')} required>
          <Input
            value={d.name}
            onChange={(e) => set({ name: e.target.value })}
            placeholder={t('ratio.namePh')}
            data-testid="dialog-name"
          />
        </Form.Item>
        <Form.Item label={t('ratio.mode')}>
          <Radio.Group
            value={d.mode}
            onChange={(e) => setMode(e.target.value as PricingMode)}
            data-testid="dialog-mode"
          >
            <Radio value="per-token">{t('ratio.perToken')}</Radio>
            <Radio value="per-request">{t('ratio.perRequest')}</Radio>
          </Radio.Group>
        </Form.Item>
        {d.mode === 'per-request' ? (
          <Form.Item label={t('ratio.price')} extra={t('ratio.priceHint')} required>
            <Input
              value={d.price}
              onChange={(e) => set({ price: e.target.value })}
              placeholder={t('ratio.pricePh')}
              data-testid="dialog-price"
            />
          </Form.Item>
        ) : (
          <>
            <Form.Item label={t('ratio.tokenInput')}>
              <Radio.Group
                value={d.tokenInput}
                onChange={(e) => set({ tokenInput: e.target.value as 'ratio' | 'price' })}
              >
                <Radio value="ratio">{t('ratio.byRatio')}</Radio>
                <Radio value="price">{t('ratio.byTokenPrice')}</Radio>
              </Radio.Group>
            </Form.Item>
            {d.tokenInput === 'ratio' ? (
              <>
                <Form.Item label={t('ratio.ratio')} extra={t('ratio.ratioHint')} required>
                  <Input value={d.ratio} onChange={(e) => set({ ratio: e.target.value })} data-testid="dialog-ratio" />
                </Form.Item>
                <Form.Item label={t('ratio.completionRatio')} extra={t('ratio.completionHint')}>
                  <Input
                    value={d.completionRatio}
                    onChange={(e) => set({ completionRatio: e.target.value })}
                    data-testid="dialog-completion"
                  />
                </Form.Item>
              </>
            ) : (
              <>
                <Form.Item label={t('ratio.inputPrice')} required>
                  <Input
                    value={d.inputPrice}
                    onChange={(e) => set({ inputPrice: e.target.value })}
                    prefix="$"
                    suffix="/ 1M tokens"
                  />
                </Form.Item>
                <Form.Item label={t('ratio.outputPrice')}>
                  <Input
                    value={d.outputPrice}
                    onChange={(e) => set({ outputPrice: e.target.value })}
                    prefix="$"
                    suffix="/ 1M tokens"
                  />
                </Form.Item>
              </>
            )}
          </>
        )}
      </Form>
    </Modal>
  );
}
