// Root signed in with the setup default password (new-api's `root` / `123456`, which one-api databases still carry):
// a warning at login and a banner on every console page until the password is changed. The flag is kept in the
// browser, as new-api's check is made in the browser: the server never sees whether a password is the default one.
import { Alert, Modal } from 'antd';
import { useSyncExternalStore } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import i18n from '../../i18n/index.js';
import { NS } from './i18n.js';
import { useUser } from '../../context/user.js';

const KEY = 'default_password_warning';
const DEFAULT_ROOT = { username: 'root', password: '123456' };
const listeners = new Set<() => void>();

function texts() {
  const t = (key: string) => i18n.t(key, { ns: NS });
  return { title: t('title'), body: t('body'), banner: t('banner'), change: t('change') };
}

function changed(): void {
  for (const l of listeners) l();
}

/** After a successful login: warns root about the default password and remembers it for the banner. */
export function warnIfDefaultPassword(username: string, password: string): void {
  if (username !== DEFAULT_ROOT.username || password !== DEFAULT_ROOT.password) return;
  localStorage.setItem(KEY, '1');
  changed();
  const t = texts();
  Modal.warning({ title: t.title, content: t.body });
}

/** The password was changed: the banner goes. */
export function clearDefaultPasswordWarning(): void {
  localStorage.removeItem(KEY);
  changed();
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** The banner, shown to root while the default password is in use. */
export function DefaultPasswordBanner() {
  useTranslation();
  const { user } = useUser();
  const flagged = useSyncExternalStore(subscribe, () => localStorage.getItem(KEY) === '1');
  if (!flagged || user?.username !== DEFAULT_ROOT.username) return null;
  const t = texts();
  return (
    <Alert
      type="warning"
      showIcon
      banner
      data-testid="default-password-banner"
      title={t.banner}
      action={<Link to="/personal">{t.change}</Link>}
      style={{ marginBottom: 16 }}
    />
  );
}
