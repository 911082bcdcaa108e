// The console's navigation groups (spec §2 Layout), built once and shown two ways: the desktop sidebar (SiderBar) and
// the phone menu drawer (MobileNav). Visibility rules live here only, so both always agree.
//
// To add a group (e.g. the saved chat links), write a builder and put it in GROUP_BUILDERS at the place it should show.
import { useEffect, useMemo, type ReactNode } from 'react';
import type { MenuProps } from 'antd';
import {
  ApiOutlined,
  CrownOutlined,
  BarChartOutlined,
  GiftOutlined,
  KeyOutlined,
  MessageOutlined,
  PictureOutlined,
  ProfileOutlined,
  ScheduleOutlined,
  SettingOutlined,
  TeamOutlined,
  ToolOutlined,
  WalletOutlined,
} from '@ant-design/icons';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { useStatus, type Status } from '../../context/status.js';
import { isAdmin, isRoot, useUser, type StoredUser } from '../../context/user.js';
import { NAV_NS } from './i18n.js';
import { chatSidebarItems, parseChats } from '../../pages/chat/links.js';
import { message } from '../../lib/feedback.js';

export interface NavItem {
  /** The route the item opens; also the menu key. */
  key: string;
  icon: ReactNode;
  label: string;
}

export interface NavGroup {
  key: string;
  label: string;
  items: NavItem[];
}

export interface NavContext {
  t: TFunction;
  status: Status;
  user: StoredUser | null;
}

/** A builder returns its group, or null when the user may not see any of it. */
export type NavGroupBuilder = (ctx: NavContext) => NavGroup | null;

const chatGroup: NavGroupBuilder = ({ t, status }) => ({
  key: 'chat',
  label: t('side.chat'),
  items: [
    { key: '/playground', icon: <MessageOutlined />, label: t('side.playground') },
    // the saved chat links of the `Chats` option (spec §2 Layout)
    ...chatSidebarItems(status.chats),
  ],
});

const consoleGroup: NavGroupBuilder = ({ t, status }) => ({
  key: 'console',
  label: t('side.console'),
  items: [
    ...(status.enable_data_export ? [{ key: '/detail', icon: <BarChartOutlined />, label: t('side.detail') }] : []),
    { key: '/token', icon: <KeyOutlined />, label: t('side.token') },
    { key: '/log', icon: <ProfileOutlined />, label: t('side.log') },
    // spec §2: the drawing and task logs only while DrawingEnabled / TaskEnabled (/api/status enable_drawing, enable_task)
    ...(status.enable_drawing ? [{ key: '/midjourney', icon: <PictureOutlined />, label: t('side.midjourney') }] : []),
    ...(status.enable_task ? [{ key: '/task', icon: <ScheduleOutlined />, label: t('side.task') }] : []),
  ],
});

const adminGroup: NavGroupBuilder = ({ t, user }) => {
  if (!isAdmin(user)) return null;
  return {
    key: 'admin',
    label: t('side.admin'),
    items: [
      { key: '/channel', icon: <ApiOutlined />, label: t('side.channel') },
      { key: '/redemption', icon: <GiftOutlined />, label: t('side.redemption') },
      { key: '/subscription', icon: <CrownOutlined />, label: t('side.subscription') },
      { key: '/user', icon: <TeamOutlined />, label: t('side.user') },
      // The option API behind the settings page is root-only (new-api-compat.md §3.4), so admins below root are not
      // offered an entry that could only show them a refusal.
      ...(isRoot(user) ? [{ key: '/setting', icon: <ToolOutlined />, label: t('setting', { ns: NAV_NS }) }] : []),
    ],
  };
};

const personalGroup: NavGroupBuilder = ({ t }) => ({
  key: 'personal',
  label: t('side.personal'),
  items: [
    { key: '/topup', icon: <WalletOutlined />, label: t('side.topup') },
    { key: '/personal', icon: <SettingOutlined />, label: t('side.personalSettings') },
  ],
});

/** Display order of the groups. */
export const GROUP_BUILDERS: NavGroupBuilder[] = [chatGroup, consoleGroup, adminGroup, personalGroup];

/** The groups a user sees, empty groups dropped. Pure, so tests can check the rules without rendering. */
export function buildNavGroups(ctx: NavContext, builders: NavGroupBuilder[] = GROUP_BUILDERS): NavGroup[] {
  return builders.map((build) => build(ctx)).filter((g): g is NavGroup => !!g && g.items.length > 0);
}

type MenuItem = Required<MenuProps>['items'][number];

export function toMenuItems(groups: NavGroup[]): MenuItem[] {
  return groups.map((g) => ({
    type: 'group',
    key: g.key,
    label: g.label,
    children: g.items.map(({ key, icon, label }) => ({ key, icon, label })),
  }));
}

/** the malformed `Chats` value last reported, so the sidebar and the phone menu say it once per value */
let reportedChats: string | undefined;

/** A malformed `Chats` option leaves the chat links out of the menu and says 聊天数据解析失败 (spec §8 "Chat"). */
function useChatDataCheck(chats: unknown, signedIn: boolean): void {
  const { t } = useTranslation();
  useEffect(() => {
    if (!signedIn || parseChats(chats) !== null) return;
    const seen = typeof chats === 'string' ? chats : JSON.stringify(chats);
    if (seen === reportedChats) return;
    reportedChats = seen;
    void message.error(t('chat.parseFailed'));
  }, [chats, signedIn, t]);
}

/** The sidebar groups of the signed-in user as antd Menu items (nothing for a guest). */
export function useNavMenuItems(): MenuItem[] {
  const { t, i18n } = useTranslation();
  const { status } = useStatus();
  const { user } = useUser();
  useChatDataCheck(status.chats, !!user);
  return useMemo(
    () => (user ? toMenuItems(buildNavGroups({ t, status, user })) : []),
    // i18n.language: labels follow a language switch even when `t` keeps its identity
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [t, i18n.language, status, user],
  );
}

/** The menu key for a path: its first segment (/user/edit/3 → /user), but a chat link keeps its index (/chat/2). */
export function selectedNavKey(pathname: string): string {
  const [, first = '', second] = pathname.split('/');
  return first === 'chat' ? `/chat/${second ?? '0'}` : `/${first}`;
}
