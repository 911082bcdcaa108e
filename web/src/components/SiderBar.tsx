// Console sidebar: groups and items by role and feature flags (spec §2 Layout), 200 px wide, 60 px collapsed.
// Props:
//   collapsed: boolean                    – current collapsed state
//   onCollapse(collapsed: boolean): void  – called by the collapse trigger
import { useMemo } from 'react';
import { Layout, Menu, type MenuProps } from 'antd';
import {
  ApiOutlined,
  BarChartOutlined,
  GiftOutlined,
  KeyOutlined,
  MessageOutlined,
  ProfileOutlined,
  SettingOutlined,
  TeamOutlined,
  ToolOutlined,
  WalletOutlined,
} from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { useLocation, useNavigate } from 'react-router';
import { useStatus } from '../context/status.js';
import { isAdmin, useUser } from '../context/user.js';
import { chatSidebarItems } from '../pages/chat/links.js';

export interface SiderBarProps {
  collapsed: boolean;
  onCollapse(collapsed: boolean): void;
}

type Item = Required<MenuProps>['items'][number];

export default function SiderBar({ collapsed, onCollapse }: SiderBarProps) {
  const { t, i18n } = useTranslation();
  const { status } = useStatus();
  const { user } = useUser();
  const navigate = useNavigate();
  const location = useLocation();

  const items = useMemo<Item[]>(() => {
    const group = (key: string, label: string, children: Item[]): Item => ({ type: 'group', key, label, children });
    const groups: Item[] = [
      group('chat', t('side.chat'), [
        { key: '/playground', icon: <MessageOutlined />, label: t('side.playground') },
        ...chatSidebarItems(status.chats), // the saved chat links (spec §2 Layout)
      ]),
      group('console', t('side.console'), [
        ...(status.enable_data_export ? [{ key: '/detail', icon: <BarChartOutlined />, label: t('side.detail') }] : []),
        { key: '/token', icon: <KeyOutlined />, label: t('side.token') },
        { key: '/log', icon: <ProfileOutlined />, label: t('side.log') },
      ]),
    ];
    if (isAdmin(user)) {
      groups.push(
        group('admin', t('side.admin'), [
          { key: '/channel', icon: <ApiOutlined />, label: t('side.channel') },
          { key: '/redemption', icon: <GiftOutlined />, label: t('side.redemption') },
          { key: '/user', icon: <TeamOutlined />, label: t('side.user') },
          // Settings use the root-only option API; admins below root get the page's no-permission notice.
          {
            key: '/setting',
            icon: <ToolOutlined />,
            label: t('side.setting', { defaultValue: i18n.language?.startsWith('en') ? 'Settings' : '系统设置' }),
          },
        ]),
      );
    }
    groups.push(
      group('personal', t('side.personal'), [
        { key: '/topup', icon: <WalletOutlined />, label: t('side.topup') },
        { key: '/personal', icon: <SettingOutlined />, label: t('side.personalSettings') },
      ]),
    );
    return groups;
  }, [t, status.enable_data_export, status.chats, user]);

  const selected = '/' + (location.pathname.split('/')[1] ?? '');

  return (
    <Layout.Sider
      width={200}
      collapsedWidth={60}
      collapsible
      collapsed={collapsed}
      onCollapse={onCollapse}
      theme="light"
      data-testid="sidebar"
      style={{ borderRight: '1px solid rgba(128,128,128,0.15)' }}
    >
      <Menu
        mode="inline"
        selectedKeys={[selected]}
        items={items}
        onClick={({ key }) => navigate(key)}
        style={{ borderInlineEnd: 'none' }}
      />
    </Layout.Sider>
  );
}
