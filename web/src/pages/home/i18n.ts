import { registerBundle } from '../../i18n/index.js';

export const NS = 'home';
registerBundle(NS, {
  zh: {
    welcome: '欢迎使用 {{name}}',
    subtitle: '统一的 AI 模型接口网关：一个密钥访问多家上游模型，按额度计费。',
    start: '进入控制台',
    pricing: '查看模型价格',
    loadFailed: '加载首页内容失败...',
    baseUrl: '接口地址',
  },
  en: {
    welcome: 'Welcome to {{name}}',
    subtitle: 'A unified AI model API gateway: one key for many upstream providers, billed by quota.',
    start: 'Open the console',
    pricing: 'View model pricing',
    loadFailed: 'Failed to load the home page content...',
    baseUrl: 'API base URL',
  },
});
