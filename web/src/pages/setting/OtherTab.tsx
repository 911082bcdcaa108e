// Other tab: system info, announcement, and branding / content (system name, logo, home page, about, footer).
import { Card, Descriptions } from 'antd';
import { useTranslation } from 'react-i18next';
import { useStatus } from '../../context/status.js';
import { renderTime } from '../../lib/render.js';
import type { Options } from './logic.js';
import { BRANDING_FIELDS, NOTICE_FIELDS } from './fields.js';
import OptionSection from './OptionSection.js';
import { NS } from './i18n.js';
import UpdateCheck from './update/UpdateCheck.js';
import SectionLayout from './SectionLayout.js';

export default function OtherTab({ options }: { options: Options }) {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  return (
    <SectionLayout
      sections={[
        {
          id: 'info',
          title: t('sec.info'),
          node: (
            <Card
              title={t('sec.info')}
              extra={<UpdateCheck version={status.version} />}
              style={{ marginBottom: 16 }}
              data-testid="section-info"
            >
              <Descriptions column={1} size="small">
                <Descriptions.Item label={t('info.version')}>{status.version || '-'}</Descriptions.Item>
                <Descriptions.Item label={t('info.startTime')}>
                  {status.start_time ? renderTime(status.start_time) : '-'}
                </Descriptions.Item>
              </Descriptions>
            </Card>
          ),
        },
        {
          id: 'notice',
          title: t('sec.notice'),
          node: <OptionSection id="notice" title={t('sec.notice')} fields={NOTICE_FIELDS} options={options} />,
        },
        {
          id: 'branding',
          title: t('sec.branding'),
          node: <OptionSection id="branding" title={t('sec.branding')} fields={BRANDING_FIELDS} options={options} />,
        },
      ]}
    />
  );
}
