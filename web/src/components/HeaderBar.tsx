// Top bar (spec §2 Layout): site links, mode badge, theme switch, language menu, guest login/register or the
// avatar menu with logout. On a phone (below md) the links give way to a menu button (nav/MobileNav) and the
// site name and user name are dropped so that everything fits in 390 px. No props.
import { Avatar, Button, Dropdown, Flex, Grid, Layout, Menu, Tag, Tooltip, theme, type MenuProps } from 'antd';
import { message } from '../lib/feedback.js';
import { GlobalOutlined, LogoutOutlined, MoonOutlined, SettingOutlined, SunOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { Link, useLocation, useNavigate } from 'react-router';
import { useStatus } from '../context/status.js';
import { useUser } from '../context/user.js';
import { useTheme } from '../context/theme.js';
import { LANGUAGE_NAMES, LANGUAGE_TAGS, OFFERED_LANGUAGES, setLanguage, type Language } from '../i18n/index.js';
import { languageOf } from '../i18n/languages.js';
import MobileNav from './nav/MobileNav.js';
import { selectedNavKey } from './nav/navGroups.js';
import { useSiteLinks } from './nav/siteLinks.js';

export default function HeaderBar() {
  const { t, i18n } = useTranslation();
  const { status } = useStatus();
  const { user, logout } = useUser();
  const { mode, toggle } = useTheme();
  const navigate = useNavigate();
  const location = useLocation();
  const { token } = theme.useToken();

  const isMobile = Grid.useBreakpoint().md === false;
  const links: MenuProps['items'] = useSiteLinks().map(({ key, label, href }) => ({
    key,
    label: href ? (
      <a href={href} target="_blank" rel="noreferrer">
        {label}
      </a>
    ) : (
      <Link to={key}>{label}</Link>
    ),
  }));
  const selected = selectedNavKey(location.pathname);

  const onLogout = async () => {
    await logout();
    void message.success(t('logout.success'));
    navigate('/login');
  };

  // each language named in its own script, with its tag so screen readers say it right
  const langItems: MenuProps['items'] = OFFERED_LANGUAGES.map((l) => ({
    key: l,
    label: <span lang={LANGUAGE_TAGS[l]}>{LANGUAGE_NAMES[l]}</span>,
    'data-testid': `language-${l}`,
  }));
  const userItems: MenuProps['items'] = [
    { key: 'personal', icon: <SettingOutlined />, label: t('nav.personal') },
    { key: 'logout', icon: <LogoutOutlined />, label: t('nav.logout') },
  ];

  return (
    <Layout.Header
      style={{
        display: 'flex',
        alignItems: 'center',
        gap: isMobile ? 4 : 12,
        paddingInline: isMobile ? 8 : 16,
        background: token.colorBgContainer,
        borderBottom: `1px solid ${token.colorBorderSecondary}`,
        position: 'sticky',
        top: 0,
        zIndex: 10,
      }}
    >
      {isMobile ? <MobileNav /> : null}
      <Link to="/" style={{ display: 'flex', alignItems: 'center', gap: 8, color: token.colorText, minWidth: 0 }}>
        <img src={status.logo || '/logo.svg'} alt="" width={28} height={28} style={{ borderRadius: 6 }} />
        {isMobile ? null : <strong style={{ whiteSpace: 'nowrap' }}>{status.system_name || 'New API'}</strong>}
      </Link>
      {status.self_use_mode_enabled ? <Tag color="blue">{t('badge.selfUse')}</Tag> : null}
      {status.demo_site_enabled ? <Tag color="orange">{t('badge.demo')}</Tag> : null}
      {isMobile ? (
        <div style={{ flex: 1 }} />
      ) : (
        <Menu
          mode="horizontal"
          selectedKeys={[selected]}
          items={links}
          style={{ flex: 1, minWidth: 0, borderBottom: 'none', background: 'transparent' }}
        />
      )}
      <Flex align="center" gap={isMobile ? 4 : 8} style={{ flex: 'none' }}>
        <Tooltip title={mode === 'dark' ? t('nav.theme.dark') : t('nav.theme.light')}>
          <Button
            type="text"
            shape="circle"
            aria-label="theme-switch"
            data-testid="theme-switch"
            icon={mode === 'dark' ? <SunOutlined /> : <MoonOutlined />}
            onClick={toggle}
          />
        </Tooltip>
        <Dropdown
          menu={{
            items: langItems,
            selectable: true,
            selectedKeys: [languageOf(i18n.language) ?? 'zh'],
            // the language's file could not be fetched: the console stays in the current one
            onClick: ({ key }) => void setLanguage(key as Language).catch(() => message.error(t('status.loadFailed'))),
          }}
          trigger={isMobile ? ['click'] : ['hover', 'click']}
        >
          <Button
            type="text"
            shape="circle"
            aria-label="language"
            data-testid="language-menu"
            icon={<GlobalOutlined />}
          />
        </Dropdown>
        {user ? (
          <Dropdown
            menu={{
              items: userItems,
              onClick: ({ key }) => (key === 'logout' ? void onLogout() : navigate('/personal')),
            }}
          >
            <Flex align="center" gap={6} style={{ cursor: 'pointer' }} data-testid="avatar-menu">
              <Avatar size="small" style={{ background: token.colorPrimary }}>
                {(user.display_name || user.username).slice(0, 1).toUpperCase()}
              </Avatar>
              {isMobile ? null : <span style={{ whiteSpace: 'nowrap' }}>{user.display_name || user.username}</span>}
            </Flex>
          </Dropdown>
        ) : (
          <Flex gap={4}>
            <Button type="primary" size="small" onClick={() => navigate('/login')}>
              {t('nav.login')}
            </Button>
            {status.self_use_mode_enabled ? null : (
              <Button size="small" onClick={() => navigate('/register')}>
                {t('nav.register')}
              </Button>
            )}
          </Flex>
        )}
      </Flex>
    </Layout.Header>
  );
}
