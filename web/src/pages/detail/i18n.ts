// Strings of the dashboard (namespace `detail`).
import { registerBundle } from '../../i18n/index.js';
import { splitPairs } from '../../components/i18nPairs.js';

registerBundle(
  'detail',
  splitPairs({
    title: ['数据看板', 'Dashboard'],
    disabled: ['数据看板未启用', 'The data dashboard is not enabled'],
    username: ['用户名称', 'Username'],
    query: ['查询', 'Query'],
    'g.hour': ['小时', 'Hour'],
    'g.day': ['天', 'Day'],
    'g.week': ['周', 'Week'],
    'total.quota': ['消耗额度', 'Quota used'],
    'total.tokens': ['消耗 Tokens', 'Tokens used'],
    'total.count': ['请求次数', 'Requests'],
    'chart.quota': ['模型消耗分布', 'Quota by model'],
    'chart.count': ['模型调用次数趋势', 'Requests by model'],
    'chart.share': ['模型调用次数占比', 'Model share of requests'],
    'chart.bar': ['柱状图', 'Bars'],
    'chart.line': ['折线图', 'Lines'],
    empty: ['暂无数据', 'No data'],
    'overview.balance': ['当前余额', 'Balance'],
    'overview.used': ['历史消耗', 'Used'],
    'overview.requests': ['请求次数', 'Requests'],
    'overview.connect': ['接入方式', 'Connect a client'],
    'overview.baseUrl': ['API 地址', 'API base URL'],
    'overview.exampleHint': [
      '示例请求（把 {{key}} 换成你的令牌）：',
      'Example call (replace {{key}} with one of your keys):',
    ],
    'overview.toTokens': ['管理令牌', 'Manage API tokens'],
    'overview.notice': ['系统公告', 'Announcement'],
    'serverAddress.title': ['请设置服务器地址', 'Set the server address'],
    'serverAddress.text': [
      '服务器地址仍是 {{current}}，而本站正通过 {{origin}} 访问。第三方登录回调、邮件链接、聊天链接和 Passkey 都依赖该地址。',
      'The server address is still {{current}}, while this site is reached at {{origin}}. Third-party login returns, email links, chat links and passkeys all depend on it.',
    ],
    'serverAddress.use': ['使用当前地址', 'Use this address'],
    'serverAddress.later': ['暂不设置', 'Not now'],
    'serverAddress.saved': ['服务器地址已保存', 'Server address saved'],
  }),
);
