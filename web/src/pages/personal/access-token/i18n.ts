import { registerBundle } from '../../../i18n/index.js';

export const NS = 'accessToken';
registerBundle(NS, {
  zh: {
    confirmTitle: '重置系统访问令牌？',
    confirmBody: '旧令牌会立即失效，使用它的脚本和集成需要换成新令牌。',
    confirmOk: '重置',
    newTitle: '新的系统访问令牌',
    newHint: '令牌只显示这一次，请立即复制并妥善保存。',
    copy: '复制',
    copied: '已复制到剪贴板',
    copyFailed: '无法复制到剪贴板，请手动复制',
    done: '我已保存',
  },
  en: {
    confirmTitle: 'Reset the system access token?',
    confirmBody: 'The old token stops working at once; scripts and integrations using it need the new one.',
    confirmOk: 'Reset',
    newTitle: 'New system access token',
    newHint: 'The token is shown only this once: copy it now and keep it safe.',
    copy: 'Copy',
    copied: 'Copied to the clipboard',
    copyFailed: 'Unable to copy to the clipboard, please copy manually',
    done: 'I have saved it',
  },
});
