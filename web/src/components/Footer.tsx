// Footer: the configured footer_html when set, else a credit line with the version (spec §2 Layout). No props.
import { Layout, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { useStatus } from '../context/status.js';

export default function Footer() {
  const { t } = useTranslation();
  const { status } = useStatus();
  return (
    <Layout.Footer style={{ textAlign: 'center', padding: '16px 24px' }} data-testid="footer">
      {status.footer_html ? (
        <div className="custom-footer" dangerouslySetInnerHTML={{ __html: status.footer_html }} />
      ) : (
        <Typography.Text type="secondary">
          {t('footer.credit', { name: status.system_name || 'New API', version: status.version ?? '' })}
        </Typography.Text>
      )}
    </Layout.Footer>
  );
}
