// Strings of the playground (namespace `playground`).
import { registerBundle } from '../../i18n/index.js';
import { splitPairs } from '../../components/i18nPairs.js';

registerBundle(
  'playground',
  splitPairs({
    title: ['操练场', 'Playground'],
    settings: ['设置', 'Settings'],
    group: ['分组', 'Group'],
    groupUser: ['用户分组', 'User group'],
    model: ['模型', 'Model'],
    temperature: ['温度：{{value}}', 'Temperature: {{value}}'],
    maxTokens: ['最大 Token 数（0 为不限制）', 'Max tokens (0 = not set)'],
    system: ['系统提示词', 'System prompt'],
    greeting: ['你好，请问有什么可以帮助您的吗？', 'Hello! How can I help you today?'],
    clear: ['清除上下文', 'Clear context'],
    cleared: ['上下文已清除', 'Context cleared'],
    inputPh: ['输入消息，Enter 发送，Shift+Enter 换行', 'Type a message; Enter sends, Shift+Enter adds a line'],
    send: ['发送', 'Send'],
    stop: ['停止', 'Stop'],
    error: ['请求出错', 'Request failed'],
  }),
);
