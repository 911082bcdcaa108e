// Model-ratio settings with sub-tabs: JSON editors (with "reset model ratios"), the visual editor, and the
// enabled models that have neither a price nor a ratio.
// Props: options: Options – stored option values
import { useMemo, useState } from 'react';
import { App, Button, Card, Popconfirm, Tabs } from 'antd';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { api } from '../../../lib/api.js';
import type { Options } from '../logic.js';
import { RATIO_JSON_FIELDS } from '../fields.js';
import OptionSection from '../OptionSection.js';
import {
  buildRows,
  mapChanges,
  mergeRowsIntoMaps,
  parseMaps,
  rowsToMaps,
  unsetModelRows,
  type ModelRow,
} from '../ratioLogic.js';
import { OPTIONS_KEY, useSaveOptions } from '../useOptions.js';
import { NS } from '../i18n.js';
import RatioTable from './RatioTable.js';

export default function ModelRatioSettings({ options }: { options: Options }) {
  const { t } = useTranslation(NS);
  const { message } = App.useApp();
  const qc = useQueryClient();
  const { save, saving } = useSaveOptions();
  const [tab, setTab] = useState('json');

  const maps = useMemo(() => parseMaps(options), [options]);
  const rows = useMemo(() => buildRows(maps), [maps]);

  const enabled = useQuery({
    queryKey: ['channel', 'models_enabled'],
    enabled: tab === 'unset',
    queryFn: async () => {
      const res = await api.get<string[]>('/api/channel/models_enabled');
      if (!res.success) {
        void message.error(res.message || t('enabledFailed'));
        return [];
      }
      return Array.isArray(res.data) ? res.data : [];
    },
  });
  const unsetRows = useMemo(() => unsetModelRows(enabled.data ?? [], maps), [enabled.data, maps]);

  const saveRows = async (next: ModelRow[], merge: boolean) => {
    const after = merge ? mergeRowsIntoMaps(maps, next) : rowsToMaps(next);
    await save(mapChanges(maps, after));
  };

  const resetRatios = useMutation({
    mutationFn: () => api.post('/api/option/rest_model_ratio'),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message || t('saveFailed'));
      void message.success(t('resetDone'));
      return qc.invalidateQueries({ queryKey: OPTIONS_KEY });
    },
  });
  const resetting = resetRatios.isPending;
  // a failed request was reported by the api client
  const reset = () => resetRatios.mutateAsync().catch(() => undefined);

  return (
    <Card title={t('sec.ratio')} style={{ marginBottom: 16 }} data-testid="section-ratio">
      <Tabs
        activeKey={tab}
        onChange={setTab}
        items={[
          {
            key: 'json',
            label: t('ratio.tabJson'),
            children: (
              <OptionSection
                id="ratio-json"
                title={t('sec.ratioJson')}
                fields={RATIO_JSON_FIELDS}
                options={options}
                extra={
                  <Popconfirm
                    title={t('ratio.resetConfirm')}
                    description={t('ratio.resetConfirmDesc')}
                    onConfirm={() => void reset()}
                    okText={t('common:action.ok')}
                    cancelText={t('common:action.cancel')}
                  >
                    <Button danger loading={resetting} data-testid="reset-model-ratio">
                      {t('ratio.reset')}
                    </Button>
                  </Popconfirm>
                }
              />
            ),
          },
          {
            key: 'visual',
            label: t('ratio.tabVisual'),
            children: (
              <RatioTable id="visual" initialRows={rows} allowAdd saving={saving} onSave={(r) => saveRows(r, false)} />
            ),
          },
          {
            key: 'unset',
            label: t('ratio.tabUnset'),
            children: (
              <RatioTable id="unset" initialRows={unsetRows} saving={saving} onSave={(r) => saveRows(r, true)} />
            ),
          },
        ]}
      />
    </Card>
  );
}
