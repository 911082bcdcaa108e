// Models tab: global relay settings, Gemini and Claude adaptor settings.
import { useTranslation } from 'react-i18next';
import type { Options } from './logic.js';
import { CLAUDE_FIELDS, GEMINI_FIELDS, GLOBAL_MODEL_FIELDS } from './fields.js';
import OptionSection from './OptionSection.js';
import { NS } from './i18n.js';

export default function ModelsTab({ options }: { options: Options }) {
  const { t } = useTranslation(NS);
  return (
    <>
      <OptionSection id="global" title={t('sec.global')} fields={GLOBAL_MODEL_FIELDS} options={options} />
      <OptionSection id="gemini" title={t('sec.gemini')} fields={GEMINI_FIELDS} options={options} />
      <OptionSection id="claude" title={t('sec.claude')} fields={CLAUDE_FIELDS} options={options} />
    </>
  );
}
