// System tab: server address, proxy worker, payment (EPay, Stripe, Creem), login toggles, email whitelist, SMTP,
// OIDC, GitHub, Linux DO, WeChat, Telegram, Turnstile. Secrets start empty (the API never returns them) and save
// only when filled.
import { useTranslation } from 'react-i18next';
import type { Options } from './logic.js';
import {
  CREEM_FIELDS,
  GITHUB_FIELDS,
  LINUXDO_FIELDS,
  PAYMENT_FIELDS,
  SERVER_FIELDS,
  SMTP_FIELDS,
  STRIPE_FIELDS,
  TELEGRAM_FIELDS,
  TURNSTILE_FIELDS,
  WECHAT_FIELDS,
  WORKER_FIELDS,
} from './fields.js';
import OptionSection from './OptionSection.js';
import LoginToggles from './system/LoginToggles.js';
import EmailWhitelist from './system/EmailWhitelist.js';
import OidcSection from './system/OidcSection.js';
import CustomOAuthSection from './system/custom-oauth/CustomOAuthSection.js';
import { NS } from './i18n.js';
import SectionLayout from './SectionLayout.js';

export default function SystemTab({ options }: { options: Options }) {
  const { t } = useTranslation(NS);
  const origin = options.ServerAddress || window.location.origin;
  return (
    <SectionLayout
      sections={[
        {
          id: 'server',
          title: t('sec.server'),
          node: <OptionSection id="server" title={t('sec.server')} fields={SERVER_FIELDS} options={options} />,
        },
        {
          id: 'worker',
          title: t('sec.worker'),
          node: (
            <OptionSection
              id="worker"
              title={t('sec.worker')}
              description={t('worker.desc')}
              fields={WORKER_FIELDS}
              options={options}
            />
          ),
        },
        {
          id: 'payment',
          title: t('sec.payment'),
          node: (
            <OptionSection
              id="payment"
              title={t('sec.payment')}
              description={t('payment.desc', { callback: `${origin}/api/user/epay/notify` })}
              fields={PAYMENT_FIELDS}
              options={options}
              // The payment callbacks are built from the server address (new-api checks it before saving).
              beforeSave={() => ((options.ServerAddress ?? '').trim() === '' ? t('payment.needServer') : null)}
            />
          ),
        },
        {
          id: 'stripe',
          title: t('sec.stripe'),
          node: (
            <OptionSection
              id="stripe"
              title={t('sec.stripe')}
              description={t('stripe.desc', { webhook: `${origin}/api/stripe/webhook` })}
              fields={STRIPE_FIELDS}
              options={options}
            />
          ),
        },
        {
          id: 'creem',
          title: t('sec.creem'),
          node: (
            <OptionSection
              id="creem"
              title={t('sec.creem')}
              description={t('creem.desc', { webhook: `${origin}/api/creem/webhook` })}
              fields={CREEM_FIELDS}
              options={options}
            />
          ),
        },
        {
          id: 'login',
          title: t('sec.login'),
          node: <LoginToggles options={options} />,
        },
        {
          id: 'emailWhitelist',
          title: t('sec.emailWhitelist'),
          node: <EmailWhitelist options={options} />,
        },
        {
          id: 'smtp',
          title: t('sec.smtp'),
          node: (
            <OptionSection
              id="smtp"
              title={t('sec.smtp')}
              description={t('smtp.desc')}
              fields={SMTP_FIELDS}
              options={options}
            />
          ),
        },
        {
          id: 'oidc',
          title: t('sec.oidc'),
          node: <OidcSection options={options} />,
        },
        {
          id: 'customOAuth',
          title: t('customOAuthSettings:title'),
          node: <CustomOAuthSection origin={origin} />,
        },
        {
          id: 'github',
          title: t('sec.github'),
          node: (
            <OptionSection
              id="github"
              title={t('sec.github')}
              description={t('oauth.desc', { homepage: origin, callback: `${origin}/oauth/github` })}
              fields={GITHUB_FIELDS}
              options={options}
            />
          ),
        },
        {
          id: 'linuxdo',
          title: t('sec.linuxdo'),
          node: (
            <OptionSection
              id="linuxdo"
              title={t('sec.linuxdo')}
              description={t('oauth.desc', { homepage: origin, callback: `${origin}/oauth/linuxdo` })}
              fields={LINUXDO_FIELDS}
              options={options}
            />
          ),
        },
        {
          id: 'wechat',
          title: t('sec.wechat'),
          node: (
            <OptionSection
              id="wechat"
              title={t('sec.wechat')}
              description={t('wechat.desc')}
              fields={WECHAT_FIELDS}
              options={options}
            />
          ),
        },
        {
          id: 'telegram',
          title: t('sec.telegram'),
          node: <OptionSection id="telegram" title={t('sec.telegram')} fields={TELEGRAM_FIELDS} options={options} />,
        },
        {
          id: 'turnstile',
          title: t('sec.turnstile'),
          node: (
            <OptionSection
              id="turnstile"
              title={t('sec.turnstile')}
              description={t('turnstile.desc')}
              fields={TURNSTILE_FIELDS}
              options={options}
            />
          ),
        },
      ]}
    />
  );
}
