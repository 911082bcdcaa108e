// Strings of the usage-limits fields and tags (namespace `limits`), shared by the token and user editors.
import { registerBundle } from '../../i18n/index.js';
import { splitPairs } from '../i18nPairs.js';

export const NS = 'limits';

registerBundle(
  NS,
  splitPairs({
    section: ['用量限制', 'Limits'],
    hint: [
      '留空或 0 表示不限制；令牌的设置优先于用户的，用户的优先于分组默认值。',
      'Empty or 0: no limit. A token setting overrides the user’s, which overrides the group default.',
    ],
    rpm: ['每分钟请求数', 'Requests per minute'],
    tpm: ['每分钟 Token 数', 'Tokens per minute'],
    budget: ['周期预算（额度）', 'Budget per period (quota)'],
    period: ['预算周期', 'Budget period'],
    'period.daily': ['每天', 'Daily'],
    'period.weekly': ['每周', 'Weekly'],
    'period.monthly': ['每月', 'Monthly'],
    none: ['不限制', 'No limit'],
    used: ['本期已用 {{used}} / {{limit}}', 'Used {{used}} / {{limit}}'],
    resets: ['{{time}} 重置', 'Resets {{time}}'],
    'tag.rpm': ['{{limit}} 次/分', '{{limit}} req/min'],
    'tag.tpm': ['{{limit}} Token/分', '{{limit}} tok/min'],
    'tag.fromUser': ['（用户或分组）', ' (user or group)'],
    col: ['限制', 'Limits'],
  }),
);
