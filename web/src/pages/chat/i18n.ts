// Strings of the chat pages (namespace `chat`). The Chinese texts are new-api's (spec §8 "Chat").
import { registerBundle } from '../../i18n/index.js';
import { splitPairs } from '../../components/i18nPairs.js';

export const NS = 'chat';
registerBundle(
  NS,
  splitPairs({
    title: ['聊天', 'Chat'],
    loading: ['正在加载，请稍候...', 'Loading, please wait...'],
    redirecting: ['正在跳转...', 'Redirecting...'],
    noToken: [
      '当前没有可用的启用令牌，请确认是否有令牌处于启用状态！',
      'You have no usable enabled token; make sure one of your tokens is enabled!',
    ],
    badConfig: ['聊天链接配置错误，请联系管理员', 'The chat links are misconfigured; please contact the administrator'],
    noLink: ['请联系管理员配置聊天链接', 'Please ask the administrator to configure chat links'],
    toTokens: ['前往令牌页', 'Go to API tokens'],
  }),
);
