// Models tab: global relay settings, Gemini and Claude adaptor settings.
import { useTranslation } from 'react-i18next';
import type { Options } from './logic.js';
import { CLAUDE_FIELDS, GEMINI_FIELDS, GLOBAL_MODEL_FIELDS } from './fields.js';
import OptionSection from './OptionSection.js';
import { NS } from './i18n.js';
import SectionLayout from './SectionLayout.js';
import type { FieldDef } from './logic.js';

export default function ModelsTab({ options }: { options: Options }) {
  const { t } = useTranslation(NS);
  const section = (id: string, fields: FieldDef[]) => ({
    id,
    title: t(`sec.${id}`),
    node: <OptionSection id={id} title={t(`sec.${id}`)} fields={fields} options={options} />,
  });
  return (
    <SectionLayout
      sections={[
        section('global', GLOBAL_MODEL_FIELDS),
        section('gemini', GEMINI_FIELDS),
        section('claude', CLAUDE_FIELDS),
      ]}
    />
  );
}
