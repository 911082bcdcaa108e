import { registerBundle } from '../../i18n/index.js';
import { splitPairs } from '../../components/i18nPairs.js';

export const NS = 'pricing';
registerBundle(
  NS,
  splitPairs({
    title: ['模型价格', 'Model pricing'],
    userBanner: [
      '您的默认分组为：{{group}}，分组倍率为：{{ratio}}',
      'Your default group is {{group}}, group ratio: {{ratio}}',
    ],
    guestBanner: [
      '您还未登陆，显示的价格为默认分组倍率: {{ratio}}',
      'You are not logged in; prices are shown with the default group ratio: {{ratio}}',
    ],
    formula: [
      '按量计费费用 = 分组倍率 × 模型倍率 × （提示token数 + 补全token数 × 补全倍率）/ 500000 （单位：美元）',
      'Pay-as-you-go cost = group ratio × model ratio × (prompt tokens + completion tokens × completion ratio) / 500000 (in USD)',
    ],
    searchPh: ['模糊搜索模型名称', 'Fuzzy search by model name'],
    copySelected: ['复制选中模型', 'Copy selected models'],
    available: ['可用性', 'Availability'],
    availableTip: ['您的分组可以使用该模型', 'Your group can use this model'],
    modelName: ['模型名称', 'Model name'],
    billingType: ['计费类型', 'Billing type'],
    perCall: ['按次计费', 'Pay per call'],
    perToken: ['按量计费', 'Pay per token'],
    perSecond: ['按秒计费', 'Pay per second'],
    usableGroups: ['可用分组', 'Usable groups'],
    currentGroup: ['当前查看的分组为：{{group}}，倍率为：{{ratio}}', 'Current group: {{group}}, ratio: {{ratio}}'],
    ratio: ['倍率', 'Ratio'],
    ratioHelpTitle: ['倍率说明', 'About ratios'],
    ratioHelp1: ['倍率是为了方便换算不同价格的模型。', 'Ratios make models with different prices comparable.'],
    ratioHelp2: [
      '模型倍率：模型输入价格相对基准价格（$0.002 / 1K tokens，即 $2 / 1M tokens）的倍数。',
      'Model ratio: the input price relative to the base price ($0.002 / 1K tokens, i.e. $2 / 1M tokens).',
    ],
    ratioHelp3: ['补全倍率：输出价格除以输入价格。', 'Completion ratio: the output price divided by the input price.'],
    ratioHelp4: [
      '分组倍率：不同用户分组的价格倍数，按次计费的模型也乘以分组倍率。',
      'Group ratio: the price multiplier of a user group; per-call prices are multiplied by it too.',
    ],
    modelRatio: ['模型倍率', 'Model ratio'],
    // a label and its value: full-width colon in Chinese, ": " in English
    labelled: ['{{label}}：{{value}}', '{{label}}: {{value}}'],
    completionRatio: ['补全倍率', 'Completion ratio'],
    groupRatio: ['分组倍率', 'Group ratio'],
    none: ['无', 'None'],
    price: ['模型价格', 'Price'],
    prompt: ['提示', 'Prompt'],
    completion: ['补全', 'Completion'],
    perMillion: ['{{amount}} / 1M tokens', '{{amount}} / 1M tokens'],
    quotaAmount: ['{{amount}} 额度', '{{amount}} quota'],
    callPrice: ['模型价格：{{amount}}', 'Price per call: {{amount}}'],
    secondPrice: ['模型价格：{{amount}} / 秒', 'Price per second: {{amount}}'],
    total: ['共 {{count}} 个模型', '{{count}} models'],
    total_one: ['共 {{count}} 个模型', '{{count}} model'],
  }),
);
