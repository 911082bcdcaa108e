// Strings of the announcement (namespace `notice`).
import { registerBundle } from '../../i18n/index.js';
import { splitPairs } from '../i18nPairs.js';

export const NS = 'notice';
registerBundle(
  NS,
  splitPairs({
    title: ['系统公告', 'Announcement'],
    close: ['关闭公告', 'Close'],
  }),
);
