// Email domain restriction: the two switches and the whitelist edited as tags (add with validation, no duplicates).
// Props: options: Options – stored option values
import { useEffect, useState } from 'react';
import { App, Button, Flex, Form, Input, Tag } from 'antd';
import { PlusOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { checkDomain, parseWhitelist, type Options } from '../logic.js';
import { EMAIL_RESTRICTION_FIELDS } from '../fields.js';
import OptionSection from '../OptionSection.js';
import { NS } from '../i18n.js';
import { helpKey } from '../help.js';

export default function EmailWhitelist({ options }: { options: Options }) {
  const { t } = useTranslation(NS);
  const { message } = App.useApp();
  const [domains, setDomains] = useState<string[]>(() => parseWhitelist(options.EmailDomainWhitelist));
  const [input, setInput] = useState('');

  useEffect(() => setDomains(parseWhitelist(options.EmailDomainWhitelist)), [options.EmailDomainWhitelist]);

  const add = () => {
    const problem = checkDomain(input, domains);
    if (problem === 'empty') return;
    if (problem === 'invalid') return void message.error(t('domain.invalid', { host: 'gmail.com' }));
    if (problem === 'duplicate') return void message.error(t('domain.duplicate'));
    setDomains([...domains, input.trim().toLowerCase()]);
    setInput('');
  };

  return (
    <OptionSection
      id="email"
      title={t('sec.emailWhitelist')}
      description={t('domain.desc')}
      fields={EMAIL_RESTRICTION_FIELDS}
      options={options}
      extraChanges={() => {
        const value = domains.join(',');
        return value === parseWhitelist(options.EmailDomainWhitelist).join(',')
          ? []
          : [{ key: 'EmailDomainWhitelist', value }];
      }}
    >
      <Form.Item label={t('f.EmailDomainWhitelist')} extra={t(helpKey('EmailDomainWhitelist'))}>
        <Flex wrap gap={6} style={{ marginBottom: 8 }} data-testid="domain-list">
          {domains.map((d) => (
            <Tag key={d} closable onClose={() => setDomains(domains.filter((x) => x !== d))}>
              {d}
            </Tag>
          ))}
        </Flex>
        <Flex gap={8}>
          <Input
            value={input}
            onChange={(e) => setInput(e.target.value)}
            onPressEnter={(e) => {
              e.preventDefault();
              add();
            }}
            placeholder={t('domain.ph')}
            style={{ maxWidth: 320 }}
            data-testid="domain-input"
          />
          <Button icon={<PlusOutlined />} onClick={add} data-testid="domain-add">
            {t('domain.add')}
          </Button>
        </Flex>
      </Form.Item>
    </OptionSection>
  );
}
