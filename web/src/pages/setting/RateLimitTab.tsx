// Rate-limit tab: per-user model request limits (new-api-compat.md §10), and the usage limits' site-wide settings
// (time zone of their periods; new-api-compat.md §13.3) and the groups' default usage limits (§13.3).
import { useTranslation } from 'react-i18next';
import type { Options } from './logic.js';
import { RATE_LIMIT_FIELDS, USAGE_LIMIT_FIELDS } from './fields.js';
import OptionSection from './OptionSection.js';
import GroupLimitsSection from './GroupLimitsSection.js';
import { NS } from './i18n.js';
import SectionLayout from './SectionLayout.js';

export default function RateLimitTab({ options }: { options: Options }) {
  const { t } = useTranslation(NS);
  return (
    <SectionLayout
      sections={[
        {
          id: 'ratelimit',
          title: t('sec.rateLimit'),
          node: (
            <OptionSection
              id="ratelimit"
              title={t('sec.rateLimit')}
              description={t('rateLimitDesc')}
              fields={RATE_LIMIT_FIELDS}
              options={options}
            />
          ),
        },
        {
          id: 'usagelimits',
          title: t('sec.usageLimits'),
          node: (
            <OptionSection
              id="usagelimits"
              title={t('sec.usageLimits')}
              description={t('usageLimitsDesc')}
              fields={USAGE_LIMIT_FIELDS}
              options={options}
            />
          ),
        },
        { id: 'grouplimits', title: t('sec.groupLimits'), node: <GroupLimitsSection options={options} /> },
      ]}
    />
  );
}
