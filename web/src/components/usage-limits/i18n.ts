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
    reset: ['重置方式', 'Resets'],
    'reset.calendar': ['按自然周期', 'Calendar'],
    'reset.rolling': ['滚动（自首次扣费起）', 'Rolling (from the first charge)'],
    'reset.calendarHint': [
      '从站点时区的零点、周一或每月 1 日开始',
      'From midnight, Monday or the 1st in the site’s time zone',
    ],
    'reset.rollingHint': [
      '从首次扣费起计 1 天、7 天或 1 个月，到期后从下一次扣费重新开始',
      'Lasts 1 day, 7 days or 1 month from its first charge, then starts again with the next charge',
    ],
    'tag.rolling': ['滚动', 'rolling'],
    notStarted: ['首次扣费后开始计时', 'Starts with the first charge'],
    none: ['不限制', 'No limit'],
    used: ['本期已用 {{used}} / {{limit}}', 'Used {{used}} / {{limit}}'],
    resets: ['{{time}} 重置', 'Resets {{time}}'],
    'tag.rpm': ['{{limit}} 次/分', '{{limit}} req/min'],
    'tag.tpm': ['{{limit}} Token/分', '{{limit}} tok/min'],
    'tag.fromUser': ['（用户或分组）', ' (user or group)'],
    col: ['限制', 'Limits'],
  }),
);
