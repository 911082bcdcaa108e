// Strings of the console navigation (sidebar, phone menu) that are not in the common bundle.
import { registerBundle } from '../../i18n/index.js';

export const NAV_NS = 'nav';

registerBundle(NAV_NS, {
  zh: {
    setting: '系统设置',
    site: '站点',
    openMenu: '打开菜单',
    menu: '菜单',
  },
  en: {
    setting: 'Settings',
    site: 'Site',
    openMenu: 'Open menu',
    menu: 'Menu',
  },
});
