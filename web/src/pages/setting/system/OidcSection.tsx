// OIDC credentials and endpoints, with "fetch config" reading the endpoints from the well-known URL.
// Props: options: Options – stored option values
import { useState } from 'react';
import { App, Button, Form, type FormInstance } from 'antd';
import { CloudDownloadOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { isHttpUrl, readOidcConfig, type Options } from '../logic.js';
import { OIDC_FIELDS } from '../fields.js';
import OptionSection from '../OptionSection.js';
import { NS } from '../i18n.js';

function FetchConfig({ form }: { form: FormInstance }) {
  const { t } = useTranslation(NS);
  const { message } = App.useApp();
  const [busy, setBusy] = useState(false);

  const fetchConfig = async () => {
    const url = String(form.getFieldValue('oidc.well_known') ?? '').trim();
    if (!isHttpUrl(url)) {
      void message.error(t('httpUrl'));
      return;
    }
    setBusy(true);
    try {
      // A plain cross-origin GET: the console headers (New-Api-User) would only trigger a CORS preflight.
      const res = await fetch(url, { headers: { Accept: 'application/json' } });
      const cfg = res.ok ? readOidcConfig(await res.json()) : null;
      if (!cfg) throw new Error('bad config');
      form.setFieldsValue({
        'oidc.authorization_endpoint': cfg.authorization_endpoint,
        'oidc.token_endpoint': cfg.token_endpoint,
        'oidc.user_info_endpoint': cfg.user_info_endpoint,
      });
      void message.success(t('oidc.fetched'));
    } catch {
      void message.error(t('oidc.fetchFailed'));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Form.Item>
      <Button
        icon={<CloudDownloadOutlined />}
        loading={busy}
        onClick={() => void fetchConfig()}
        data-testid="oidc-fetch"
      >
        {t('oidc.fetch')}
      </Button>
    </Form.Item>
  );
}

export default function OidcSection({ options }: { options: Options }) {
  const { t } = useTranslation(NS);
  return (
    <OptionSection
      id="oidc"
      title={t('sec.oidc')}
      description={t('oidc.desc', { callback: `${options.ServerAddress || window.location.origin}/oauth/oidc` })}
      fields={OIDC_FIELDS}
      options={options}
    >
      {(form) => <FetchConfig form={form} />}
    </OptionSection>
  );
}
