// Channel affinity (issue 44): new-api's channel_affinity_setting edited as its rows (switches, sizes, the rules as
// JSON checked before saving), and the sticky-channel cache's statistics with clearing per rule or all (root only,
// GET/DELETE /api/option/channel_affinity_cache). Its strings are its own namespace, registered here.
import { useEffect, useState } from 'react';
import { Alert, App, Button, Card, Descriptions, Input, InputNumber, Space, Switch, Table, Typography } from 'antd';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { registerBundle } from '../../i18n/index.js';
import { splitPairs, type Pairs } from '../../components/i18nPairs.js';
import { api, showIfError } from '../../lib/api.js';
import type { Options } from './logic.js';
import { useSaveOptions } from './useOptions.js';
import {
  STATS_URL,
  affinityChanges,
  formOf,
  rulesProblem,
  type AffinityForm,
  type AffinityStats,
} from './channelAffinity.js';

const NS = 'setting-affinity';

const pairs: Pairs = {
  title: ['渠道亲和性', 'Channel affinity'],
  help: [
    '同一会话的连续请求优先发往上次成功的渠道，使上游的提示词缓存得以命中（如 Claude Code 的 metadata.user_id、Codex 的 prompt_cache_key）。亲和只在令牌分组与模型本可选中的渠道中生效；渠道被禁用时改走正常选择。',
    "Consecutive requests of one conversation go to the channel that answered the previous one, so the upstream's prompt cache is hit (Claude Code's metadata.user_id, Codex's prompt_cache_key). Affinity only prefers a channel the token's group and model could have picked; a disabled channel is left for the normal choice.",
  ],
  rulesHelp: [
    '规则（JSON 数组，new-api 格式）：name；model_regex、path_regex（正则数组，按顺序匹配第一条规则）；user_agent_include（包含即匹配，不区分大小写）；key_sources（按顺序取第一个非空值：request_header 的 key、gjson 的 path 如 metadata.user_id、context_int / context_string 的 key，可加 nested_path 读取 JSON 值内的字段）；value_regex；ttl_seconds（0 用默认）；skip_retry_on_failure（亲和渠道失败时不再重试其他渠道）；include_rule_name / include_model_name / include_using_group（写入缓存键）。',
    "Rules (a JSON array, new-api's format): name; model_regex, path_regex (arrays of regexes; the first rule that matches applies); user_agent_include (substrings, any case); key_sources (the first non-empty value in order: a request_header's key, a gjson path such as metadata.user_id, a context_int / context_string key; nested_path reads a field inside a JSON value); value_regex; ttl_seconds (0: the default); skip_retry_on_failure (a sticky channel that fails is not retried elsewhere); include_rule_name / include_model_name / include_using_group (parts of the cache key).",
  ],
  enabled: ['启用渠道亲和', 'Enable channel affinity'],
  switch_on_success: ['成功后切换到实际成功的渠道', 'Remember the channel that actually answered (after a retry)'],
  keep_on_channel_disabled: ['渠道不可用时保留亲和记录', 'Keep the entry when its channel cannot be used'],
  max_entries: ['最大缓存条目数（内存）', 'Maximum cache entries (memory)'],
  default_ttl_seconds: ['默认过期时间（秒）', 'Default time to live (seconds)'],
  rules: ['规则', 'Rules'],
  format: ['格式化', 'Format'],
  save: ['保存渠道亲和设置', 'Save channel affinity'],
  badJson: ['规则不是合法的 JSON', 'The rules are not valid JSON'],
  notArray: ['规则必须是 JSON 数组', 'The rules must be a JSON array'],
  notObject: ['规则 {{at}} 不是对象', 'Rule {{at}} is not an object'],
  badRegex: ['规则 {{at}} 含有无效的正则表达式', 'Rule {{at}} has an invalid regular expression'],
  badSource: [
    '规则 {{at}} 的 key_sources 无效（类型：context_int、context_string、request_header、gjson）',
    'Rule {{at}} has invalid key_sources (types: context_int, context_string, request_header, gjson)',
  ],
  cache: ['亲和缓存', 'Affinity cache'],
  total: ['条目总数', 'Entries'],
  unknown: ['未知规则的条目', 'Entries of unknown rules'],
  capacity: ['容量', 'Capacity'],
  algo: ['存储', 'Store'],
  rule: ['规则', 'Rule'],
  entries: ['条目', 'Entries'],
  clear: ['清空', 'Clear'],
  clearAll: ['清空全部', 'Clear all'],
  refresh: ['刷新', 'Refresh'],
  cleared: ['已清除 {{n}} 条', 'Cleared {{n}} entries'],
};
registerBundle(NS, splitPairs(pairs));

const SWITCHES = ['enabled', 'switch_on_success', 'keep_on_channel_disabled'] as const;
const NUMBERS = ['max_entries', 'default_ttl_seconds'] as const;

export default function ChannelAffinitySection({ options }: { options: Options }) {
  const { t } = useTranslation(NS);
  const { message } = App.useApp();
  const { save, saving } = useSaveOptions();
  const [form, setForm] = useState<AffinityForm>(() => formOf(options));
  useEffect(() => setForm(formOf(options)), [options]);
  const problem = rulesProblem(form.rules);
  const qc = useQueryClient();
  const stats = useQuery({
    queryKey: ['channel-affinity-stats'],
    queryFn: async () => {
      const res = await api.get<AffinityStats>(STATS_URL);
      if (!res.success) throw new Error(res.message);
      return res.data;
    },
  });

  const del = useMutation({ mutationFn: (query: string) => api.del<{ deleted: number }>(`${STATS_URL}?${query}`) });
  const clear = async (query: string) => {
    const res = await del.mutateAsync(query);
    if (showIfError(res)) void message.success(t('cleared', { n: res.data.deleted }));
    await qc.invalidateQueries({ queryKey: ['channel-affinity-stats'] });
  };

  const onSave = async () => {
    if (problem) return;
    await save(affinityChanges(options, form));
    await qc.invalidateQueries({ queryKey: ['channel-affinity-stats'] });
  };

  const format = () => {
    if (!problem) setForm({ ...form, rules: JSON.stringify(JSON.parse(form.rules), null, 2) });
  };

  const byRule = Object.entries(stats.data?.by_rule_name ?? {}).map(([rule, n]) => ({ rule, n }));
  return (
    <Card title={t('title')} data-testid="section-channel-affinity" style={{ marginBottom: 16 }}>
      <Typography.Paragraph type="secondary">{t('help')}</Typography.Paragraph>
      <Space wrap size="large" style={{ marginBottom: 16 }}>
        {SWITCHES.map((k) => (
          <Space key={k}>
            <Switch checked={form[k]} onChange={(v) => setForm({ ...form, [k]: v })} data-testid={`affinity-${k}`} />
            {t(k)}
          </Space>
        ))}
        {NUMBERS.map((k) => (
          <Space key={k}>
            {t(k)}
            <InputNumber<number>
              min={1}
              precision={0}
              value={form[k]}
              onChange={(v) => setForm({ ...form, [k]: v ?? form[k] })}
              data-testid={`affinity-${k}`}
            />
          </Space>
        ))}
      </Space>
      <Typography.Title level={5}>{t('rules')}</Typography.Title>
      <Typography.Paragraph type="secondary">{t('rulesHelp')}</Typography.Paragraph>
      <Input.TextArea
        value={form.rules}
        onChange={(e) => setForm({ ...form, rules: e.target.value })}
        autoSize={{ minRows: 8, maxRows: 30 }}
        style={{ fontFamily: 'monospace' }}
        status={problem ? 'error' : undefined}
        data-testid="affinity-rules"
      />
      {problem && <Alert type="error" showIcon style={{ marginTop: 8 }} title={t(problem.key, { at: problem.at })} />}
      <Space style={{ marginTop: 12, marginBottom: 24 }}>
        <Button onClick={format} disabled={!!problem}>
          {t('format')}
        </Button>
        <Button type="primary" onClick={onSave} loading={saving} disabled={!!problem} data-testid="save-affinity">
          {t('save')}
        </Button>
      </Space>
      <Typography.Title level={5}>{t('cache')}</Typography.Title>
      {stats.data && (
        <Descriptions size="small" column={{ xs: 1, sm: 2, md: 4 }} style={{ marginBottom: 12 }}>
          <Descriptions.Item label={t('total')}>{stats.data.total}</Descriptions.Item>
          <Descriptions.Item label={t('unknown')}>{stats.data.unknown}</Descriptions.Item>
          <Descriptions.Item label={t('capacity')}>{stats.data.cache_capacity}</Descriptions.Item>
          <Descriptions.Item label={t('algo')}>{stats.data.cache_algo}</Descriptions.Item>
        </Descriptions>
      )}
      {stats.error && <Alert type="error" showIcon title={(stats.error as Error).message} />}
      <Table
        rowKey="rule"
        size="small"
        pagination={false}
        dataSource={byRule}
        columns={[
          { title: t('rule'), dataIndex: 'rule', key: 'rule' },
          { title: t('entries'), dataIndex: 'n', key: 'n' },
          {
            key: 'clear',
            render: (_: unknown, r: { rule: string }) => (
              <Button size="small" onClick={() => void clear(`rule_name=${encodeURIComponent(r.rule)}`)}>
                {t('clear')}
              </Button>
            ),
          },
        ]}
      />
      <Space style={{ marginTop: 12 }}>
        <Button danger onClick={() => void clear('all=true')} data-testid="affinity-clear-all">
          {t('clearAll')}
        </Button>
        <Button onClick={() => void stats.refetch()}>{t('refresh')}</Button>
      </Space>
    </Card>
  );
}
