import { registerBundle } from '../../i18n/index.js';

export const NS = 'quotaInput';
registerBundle(NS, {
  zh: {
    units: '= {{quota}} 额度',
    quotaUnit: '额度',
  },
  en: {
    units: '= {{quota}} quota',
    quotaUnit: 'quota',
  },
});
