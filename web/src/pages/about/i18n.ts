import { registerBundle } from '../../i18n/index.js';

export const NS = 'about';
registerBundle(NS, {
  zh: {
    title: '关于',
    empty: '管理员暂时未设置任何关于内容',
    emptyHint: '可以在设置页面设置关于内容，支持 HTML & Markdown',
    project: '项目仓库地址：',
  },
  en: {
    title: 'About',
    empty: 'The administrator has not set any about content yet',
    emptyHint: 'About content can be set on the settings page; HTML and Markdown are supported',
    project: 'Project repository: ',
  },
});
