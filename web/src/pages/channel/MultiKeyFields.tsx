// The channel drawer's multi-key inputs (multi-key.ts): on create the add mode (one channel, one per key, or one
// channel holding every key) and, for the last, how a key is chosen; on the edit of a multi-key channel how a key is
// chosen and whether the keys typed are added or replace the channel's.
import { useTranslation } from 'react-i18next';
import { Form, Radio, Select } from 'antd';
import type { AddMode, ChannelInfo, KeyEditMode, MultiKeyMode } from './multi-key.js';

const NS = 'channel';

export interface MultiKeyChoice {
  addMode: AddMode;
  mkMode: MultiKeyMode;
  keyMode: KeyEditMode;
}

export default function MultiKeyFields(props: {
  isEdit: boolean;
  /** the edited channel's channel_info (null on create) */
  info: ChannelInfo | null;
  value: MultiKeyChoice;
  onChange(v: MultiKeyChoice): void;
}) {
  const { isEdit, info, value, onChange } = props;
  const { t } = useTranslation(NS);
  const set = (patch: Partial<MultiKeyChoice>) => onChange({ ...value, ...patch });
  const showKeyChoice = isEdit ? !!info?.is_multi_key : value.addMode === 'multi_to_single';
  if (isEdit && !info?.is_multi_key) return null;
  return (
    <>
      {!isEdit && (
        <Form.Item label={t('mk.addMode')}>
          <Radio.Group
            value={value.addMode}
            onChange={(e) => set({ addMode: e.target.value as AddMode })}
            data-testid="channel-add-mode"
            options={[
              { value: 'batch', label: t('mk.mode.batch') },
              { value: 'single', label: t('mk.mode.single') },
              { value: 'multi_to_single', label: t('mk.mode.multi') },
            ]}
          />
        </Form.Item>
      )}
      {showKeyChoice && (
        <Form.Item label={t('mk.keyMode')}>
          <Select
            value={value.mkMode}
            onChange={(v: MultiKeyMode) => set({ mkMode: v })}
            style={{ width: 200 }}
            data-testid="channel-multi-key-mode"
            options={[
              { value: 'random', label: t('mk.random') },
              { value: 'polling', label: t('mk.polling') },
            ]}
          />
        </Form.Item>
      )}
      {isEdit && (
        <Form.Item label={t('mk.editKeys')}>
          <Radio.Group
            value={value.keyMode}
            onChange={(e) => set({ keyMode: e.target.value as KeyEditMode })}
            data-testid="channel-key-mode"
            options={[
              { value: 'append', label: t('mk.append') },
              { value: 'replace', label: t('mk.replace') },
            ]}
          />
        </Form.Item>
      )}
    </>
  );
}
