import { registerBundle } from '../../i18n/index.js';

export const NS = 'oauth';
registerBundle(NS, {
  zh: {
    processing: '处理中...',
    bindSuccess: '绑定成功！',
    loginSuccess: '登录成功！',
    failedRedirect: '操作失败，重定向至登录界面中...',
    otherLogin: '使用第三方账号登录',
    loginWith: '使用 {{name}} 登录',
    bind: '绑定',
    bound: '已绑定',
    stateFailed: '获取授权状态失败：{{message}}',
  },
  en: {
    processing: 'Processing...',
    bindSuccess: 'Binding successful!',
    loginSuccess: 'Login successful!',
    failedRedirect: 'Operation failed, redirecting to login page...',
    otherLogin: 'Or log in with',
    loginWith: 'Log in with {{name}}',
    bind: 'Bind',
    bound: 'Bound',
    stateFailed: 'Could not start the authorization: {{message}}',
  },
});
