// The default-password warning's texts: it shows outside any page (a modal at login, the layout's banner).
import { registerBundle } from '../../i18n/index.js';
import { splitPairs } from '../i18nPairs.js';

export const NS = 'defaultPassword';

registerBundle(
  NS,
  splitPairs({
    title: ['您正在使用默认密码！', 'You are using the default password!'],
    body: ['请立刻修改默认密码！', 'Change the default password right away.'],
    banner: [
      'root 账户仍在使用默认密码，任何人都能登录管理后台。',
      'The root account still uses the default password: anyone can sign in to the console.',
    ],
    change: ['去修改密码', 'Change the password'],
  }),
);
