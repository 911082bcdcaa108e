// Options query (GET /api/option/, root only) and the save action shared by every section: one PUT per changed
// key, the spec §8 messages, then a reload of the options and of the site status so the shell follows.
import { useCallback, useState } from 'react';
import { App } from 'antd';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { api } from '../../lib/api.js';
import { useStatus } from '../../context/status.js';
import { outcomeOf, saveChanges, type OptionChange, type Options, type SaveResult } from './logic.js';
import { NS } from './i18n.js';

export const OPTIONS_KEY = ['options'] as const;

export function useOptions() {
  return useQuery({
    queryKey: OPTIONS_KEY,
    queryFn: async (): Promise<Options> => {
      const res = await api.get<Array<{ key: string; value: string }>>('/api/option/');
      if (!res.success) throw new Error(res.message);
      const out: Options = {};
      for (const o of res.data ?? []) out[o.key] = o.value ?? '';
      return out;
    },
  });
}

export function useSaveOptions() {
  const { t } = useTranslation(NS);
  const { message } = App.useApp();
  const qc = useQueryClient();
  const { refresh } = useStatus();
  // one PUT per changed key; saveChanges (logic.ts) runs them in order and gathers the outcome
  const put = useMutation({ mutationFn: (c: OptionChange) => api.put<unknown>('/api/option/', c) });
  const [saving, setSaving] = useState(false);

  const save = useCallback(
    async (changes: OptionChange[], opts: { quietSuccess?: boolean } = {}): Promise<SaveResult> => {
      if (changes.length === 0) {
        void message.warning(t('noChange'));
        return { saved: [], failed: [] };
      }
      setSaving(true);
      let result: SaveResult;
      try {
        result = await saveChanges(changes, put.mutateAsync);
      } finally {
        setSaving(false);
      }
      const messages = [...new Set(result.failed.map((f) => f.message).filter(Boolean))];
      for (const m of messages) void message.error(m);
      const outcome = outcomeOf(result);
      if (outcome === 'saved' && !opts.quietSuccess) void message.success(t('saved'));
      else if (outcome === 'partial') void message.error(t('partialFailed'));
      else if (outcome === 'failed' && messages.length === 0) void message.error(t('saveFailed'));
      if (result.saved.length > 0) {
        await qc.invalidateQueries({ queryKey: OPTIONS_KEY });
        await refresh();
      }
      return result;
    },
    [message, qc, refresh, t, put.mutateAsync],
  );

  return { save, saving };
}
