import { registerBundle } from '../../../i18n/index.js';

export const NS = 'customOAuth';
registerBundle(NS, {
  zh: {
    bind: '绑定',
    unbind: '解绑',
    notBound: '未绑定',
    unbindConfirm: '确定解绑 {{name}} 账户？',
    unbound: '已解绑',
  },
  en: {
    bind: 'Bind',
    unbind: 'Unbind',
    notBound: 'Not bound',
    unbindConfirm: 'Unbind the {{name}} account?',
    unbound: 'Unbound',
  },
});
