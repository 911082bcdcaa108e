// Top bar (spec §2 Layout): site links, mode badge, theme switch, language menu, guest login/register or the
// avatar menu with logout. No props.
import { Avatar, Button, Dropdown, Flex, Layout, Menu, Tag, Tooltip, theme, type MenuProps } from 'antd';
import { message } from '../lib/feedback.js';
import { GlobalOutlined, LogoutOutlined, MoonOutlined, SettingOutlined, SunOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { Link, useLocation, useNavigate } from 'react-router';
import { useStatus } from '../context/status.js';
import { useUser } from '../context/user.js';
import { useTheme } from '../context/theme.js';

export default function HeaderBar() {
  const { t, i18n } = useTranslation();
  const { status } = useStatus();
  const { user, logout } = useUser();
  const { mode, toggle } = useTheme();
  const navigate = useNavigate();
  const location = useLocation();
  const { token } = theme.useToken();

  const consolePath = status.enable_data_export ? '/detail' : '/token';
  const links: MenuProps['items'] = [
    { key: '/', label: <Link to="/">{t('nav.home')}</Link> },
    { key: consolePath, label: <Link to={consolePath}>{t('nav.console')}</Link> },
    { key: '/pricing', label: <Link to="/pricing">{t('nav.pricing')}</Link> },
    ...(status.docs_link
      ? [
          {
            key: 'docs',
            label: (
              <a href={status.docs_link} target="_blank" rel="noreferrer">
                {t('nav.docs')}
              </a>
            ),
          },
        ]
      : []),
    { key: '/about', label: <Link to="/about">{t('nav.about')}</Link> },
  ];
  const selected = location.pathname === '/' ? '/' : '/' + (location.pathname.split('/')[1] ?? '');

  const onLogout = async () => {
    await logout();
    void message.success(t('logout.success'));
    navigate('/login');
  };

  const langItems: MenuProps['items'] = [
    { key: 'zh', label: t('lang.zh') },
    { key: 'en', label: t('lang.en') },
  ];
  const userItems: MenuProps['items'] = [
    { key: 'personal', icon: <SettingOutlined />, label: t('nav.personal') },
    { key: 'logout', icon: <LogoutOutlined />, label: t('nav.logout') },
  ];

  return (
    <Layout.Header
      style={{
        display: 'flex',
        alignItems: 'center',
        gap: 12,
        paddingInline: 16,
        background: token.colorBgContainer,
        borderBottom: `1px solid ${token.colorBorderSecondary}`,
        position: 'sticky',
        top: 0,
        zIndex: 10,
      }}
    >
      <Link to="/" style={{ display: 'flex', alignItems: 'center', gap: 8, color: token.colorText }}>
        <img src={status.logo || '/logo.svg'} alt="" width={28} height={28} style={{ borderRadius: 6 }} />
        <strong style={{ whiteSpace: 'nowrap' }}>{status.system_name || 'New API'}</strong>
      </Link>
      {status.self_use_mode_enabled ? <Tag color="blue">{t('badge.selfUse')}</Tag> : null}
      {status.demo_site_enabled ? <Tag color="orange">{t('badge.demo')}</Tag> : null}
      <Menu
        mode="horizontal"
        selectedKeys={[selected]}
        items={links}
        style={{ flex: 1, minWidth: 0, borderBottom: 'none', background: 'transparent' }}
      />
      <Flex align="center" gap={8}>
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
            selectedKeys: [i18n.language?.startsWith('en') ? 'en' : 'zh'],
            onClick: ({ key }) => void i18n.changeLanguage(key),
          }}
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
              <span style={{ whiteSpace: 'nowrap' }}>{user.display_name || user.username}</span>
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
