// The channels page's changes as mutations (spec §5 inline edit and batch, §7 channel calls, §8 copy): each toasts
// its answer and, when it changed something, invalidates the channel lists; its promise settles after the reload.
import { useMutation, useMutationState, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { App as AntApp } from 'antd';
import { api, failureText } from '../../lib/api.js';
import { translateServerMessage } from '../../i18n/server-message.js';
import { BalanceFailures, readBalanceReport } from './BalanceReport.js';
import { parseInlinePriority, parseInlineWeight, type Channel } from './logic.js';
import { CHANNELS_KEY } from './queries.js';

/** Name suffix of a copied channel (new-api's default) and the server's answer when the source is gone. */
const COPY_SUFFIX = '_复制';
const COPY_MISSING = '渠道不存在';
/** The per-channel test's key: the rows under test are the pending mutations under it. */
const TEST_KEY = ['channel-test'] as const;

type TestAnswer = { success: boolean; message: string; time?: number };
type BalanceAnswer = { success: boolean; message: string; data?: number; balance?: number };

export type ChannelActions = ReturnType<typeof useChannelActions>;

/** `clearSelection` runs after a batch change succeeded, `closeBatchTag` after the batch tag was set. */
export function useChannelActions(clearSelection: () => void, closeBatchTag: () => void) {
  const { t } = useTranslation('channel');
  const { message, modal } = AntApp.useApp();
  const qc = useQueryClient();
  const reload = () => qc.invalidateQueries({ queryKey: CHANNELS_KEY });
  /** The common answer: a success toasts `ok` and reloads, a refusal toasts the server's message. */
  const answered = (res: { success: boolean; message: string }, ok: () => void) => {
    if (!res.success) return void message.error(res.message);
    ok();
    return reload();
  };

  const put = useMutation({
    mutationFn: (body: Record<string, unknown>) => api.put<Channel>('/api/channel/', body),
    onSuccess: (res) => {
      if (!res.success) return void message.error(failureText(res, 'error.updateFailed'));
      message.success(t('msg.done'));
      return reload();
    },
  });
  const remove = useMutation({
    mutationFn: (id: number) => api.del(`/api/channel/${id}`),
    onSuccess: (res) => answered(res, () => message.success(t('msg.deleted'))),
  });
  const test = useMutation({
    mutationKey: TEST_KEY,
    mutationFn: (ch: Channel) =>
      api.get(
        `/api/channel/test/${ch.id}`,
        ch.test_model ? { model: ch.test_model } : undefined,
      ) as Promise<TestAnswer>,
    onSuccess: (res, ch) =>
      answered(res, () => message.success(t('msg.testOk', { name: ch.name, time: (res.time ?? 0).toFixed(2) }))),
  });
  const testingIds = useMutationState({
    filters: { mutationKey: TEST_KEY, status: 'pending' },
    select: (m) => (m.state.variables as Channel).id,
  });
  const balance = useMutation({
    mutationFn: (ch: Channel) => api.get<number>(`/api/channel/update_balance/${ch.id}`) as Promise<BalanceAnswer>,
    onSuccess: (res, ch) =>
      answered(res, () => {
        const value = res.balance ?? res.data ?? 0;
        message.success(t('msg.balanceOk', { name: ch.name, balance: Number(value).toFixed(2) }));
      }),
  });
  /**
   * Copy (spec §8, new-api's behaviour): the server duplicates the channel with every field including the key,
   * names it name + suffix and resets balance/used quota; the list is then reloaded.
   */
  const copy = useMutation({
    mutationFn: (ch: Channel) =>
      api.post<{ id: number }>(
        `/api/channel/copy/${ch.id}?suffix=${encodeURIComponent(COPY_SUFFIX)}&reset_balance=true`,
      ),
    onSuccess: (res) => {
      if (res.success) {
        message.success(t('msg.copied'));
        return reload();
      }
      if (res.message === translateServerMessage(COPY_MISSING)) message.error(t('err.copyMissing'));
      else message.error(t('err.copyFailedWith', { message: res.message }));
    },
    onError: () => message.error(t('err.copyFailed')),
  });
  // Toolbar tools (spec §7): test all runs in the background on the server; balances and abilities finish first.
  const testAll = useMutation({
    mutationFn: () => api.get('/api/channel/test'),
    onSuccess: (res) => {
      if (res.success) message.info(t('msg.testAllStarted'));
      else message.error(res.message);
    },
  });
  const allBalances = useMutation({
    mutationFn: () => api.get('/api/channel/update_balance'),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      const report = readBalanceReport(res.data);
      if (report && report.failed.length > 0) {
        modal.warning({
          title: t('balances.failedTitle', { count: report.failed.length }),
          content: <BalanceFailures report={report} t={t} />,
          width: 560,
        });
      } else message.info(t('msg.allBalancesUpdated'));
      return reload();
    },
  });
  const fix = useMutation({
    mutationFn: () => api.post<number>('/api/channel/fix'),
    onSuccess: (res) => answered(res, () => message.success(t('msg.abilitiesFixed', { count: res.data ?? 0 }))),
  });
  const tag = useMutation({
    mutationFn: (v: { tag: string; action: 'enabled' | 'disabled' }) =>
      api.post(`/api/channel/tag/${v.action}`, { tag: v.tag }),
    onSuccess: (res) => answered(res, () => message.success(t('msg.done'))),
  });
  const batchDelete = useMutation({
    mutationFn: (ids: number[]) => api.post<number>('/api/channel/batch', { ids }),
    onSuccess: (res, ids) =>
      answered(res, () => {
        message.success(t('msg.batchDeleted', { count: res.data ?? ids.length }));
        clearSelection();
      }),
  });
  const batchTag = useMutation({
    mutationFn: (v: { ids: number[]; tag: string }) => api.post('/api/channel/batch/tag', v),
    onSuccess: (res) =>
      answered(res, () => {
        message.success(t('msg.done'));
        closeBatchTag();
        clearSelection();
      }),
  });
  const deleteDisabled = useMutation({
    mutationFn: () => api.del<number>('/api/channel/disabled'),
    onSuccess: (res) => answered(res, () => message.success(t('msg.disabledDeleted', { count: res.data ?? 0 }))),
  });

  // A failed request was toasted by the api client: the callers' promises never reject.
  const run = <V,>(m: { mutateAsync(v: V): Promise<unknown> }, v: V) =>
    m.mutateAsync(v).then(
      () => undefined,
      () => undefined,
    );

  return {
    reload,
    testing: Object.fromEntries(testingIds.map((id) => [id, true])) as Record<number, boolean>,
    updatingBalances: allBalances.isPending,
    setStatus: (id: number, status: number) => run(put, { id, status }),
    saveInline: async (ch: Channel, field: 'priority' | 'weight', raw: unknown) => {
      const value = field === 'priority' ? parseInlinePriority(raw) : parseInlineWeight(raw);
      if (value === null) return void message.error(t(field === 'priority' ? 'err.priority' : 'err.weight'));
      if (value === (ch[field] ?? 0)) return;
      return run(put, { id: ch.id, [field]: value });
    },
    deleteChannel: (id: number) => run(remove, id),
    testChannel: (ch: Channel) => run(test, ch),
    updateBalance: (ch: Channel) => run(balance, ch),
    copyChannel: (ch: Channel) => run(copy, ch),
    testAll: () => run(testAll, undefined),
    updateAllBalances: () => run(allBalances, undefined),
    fixAbilities: () => run(fix, undefined),
    tagAction: (tagName: string, action: 'enabled' | 'disabled') => run(tag, { tag: tagName, action }),
    batchDelete: async (ids: number[]) => {
      if (ids.length === 0) return void message.error(t('err.batchDeleteEmpty'));
      return run(batchDelete, ids);
    },
    batchTag: async (ids: number[], tagName: string) => {
      if (tagName.trim() === '') return void message.error(t('err.tagEmpty'));
      return run(batchTag, { ids, tag: tagName.trim() });
    },
    deleteDisabled: () => run(deleteDisabled, undefined),
  };
}
