// Login and registration switches. Each switch saves at once (as in new-api); turning password login off asks
// for confirmation first, and cancelling leaves the switch on (spec §4 Disabling password login).
// Props: options: Options – stored option values
import { useState } from 'react';
import { App, Card, Col, Row, Switch, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import type { Options } from '../logic.js';
import { LOGIN_TOGGLES } from '../fields.js';
import { useSaveOptions } from '../useOptions.js';
import { NS } from '../i18n.js';
import { helpKey } from '../help.js';

export default function LoginToggles({ options }: { options: Options }) {
  const { t } = useTranslation(NS);
  const { modal } = App.useApp();
  const { save } = useSaveOptions();
  const [busy, setBusy] = useState<string | null>(null);

  const apply = async (key: string, on: boolean) => {
    setBusy(key);
    try {
      await save([{ key, value: on ? 'true' : 'false' }]);
    } finally {
      setBusy(null);
    }
  };

  const onChange = (key: string, on: boolean) => {
    if (key === 'PasswordLoginEnabled' && !on) {
      modal.confirm({
        title: t('login.disablePasswordTitle'),
        content: t('login.disablePasswordContent'),
        okText: t('common:action.ok'),
        cancelText: t('common:action.cancel'),
        onOk: () => apply(key, false),
      });
      return;
    }
    void apply(key, on);
  };

  return (
    <Card title={t('sec.login')} style={{ marginBottom: 16 }} data-testid="section-login">
      <Typography.Paragraph type="secondary">{t('login.desc')}</Typography.Paragraph>
      <Row gutter={[16, 12]}>
        {LOGIN_TOGGLES.map((key) => (
          <Col key={key} xs={24} md={12} lg={8}>
            <label style={{ display: 'flex', gap: 8, alignItems: 'center' }}>
              <Switch
                checked={options[key] === 'true'}
                loading={busy === key}
                onChange={(on) => onChange(key, on)}
                data-testid={`toggle-${key}`}
              />
              <span>{t(`f.${key}`)}</span>
            </label>
            <Typography.Text type="secondary" style={{ display: 'block', marginInlineStart: 52, fontSize: 12 }}>
              {t(helpKey(key))}
            </Typography.Text>
          </Col>
        ))}
      </Row>
    </Card>
  );
}
