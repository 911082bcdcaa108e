// Strings of the update check (namespace `update`). 检查更新失败，请稍后再试 is new-api's (spec §8).
import { registerBundle } from '../../../i18n/index.js';
import { splitPairs } from '../../../components/i18nPairs.js';

export const NS = 'update';
registerBundle(
  NS,
  splitPairs({
    check: ['检查更新', 'Check for updates'],
    failed: ['检查更新失败，请稍后再试', 'Could not check for updates; please try again later'],
    latest: ['已是最新版本：{{tag}}', 'You are on the latest version: {{tag}}'],
    available: ['新版本：{{tag}}', 'New version: {{tag}}'],
    notConfigured: [
      '未设置发布仓库（构建时的 VITE_RELEASES_REPO），无法检查更新',
      'No release repository is set (VITE_RELEASES_REPO at build time), so updates cannot be checked',
    ],
    current: ['当前版本：{{version}}', 'Running: {{version}}'],
    download: ['前往 GitHub 查看', 'View on GitHub'],
    close: ['关闭', 'Close'],
  }),
);
