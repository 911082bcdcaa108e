// Phone navigation (below the md breakpoint, 768 px, where the sidebar is not shown): a menu button for the top bar
// that opens the sidebar's groups in a drawer, with the top bar's site links above them. Choosing an entry closes it.
// No props.
import { useState } from 'react';
import { Button, Drawer, Menu, type MenuProps } from 'antd';
import { MenuOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { useLocation, useNavigate } from 'react-router';
import { NAV_NS } from './i18n.js';
import { selectedNavKey, useNavMenuItems } from './navGroups.js';
import { useSiteLinks } from './siteLinks.js';

const SITE_PREFIX = 'site:';

export default function MobileNav() {
  const { t } = useTranslation(NAV_NS);
  const [open, setOpen] = useState(false);
  const consoleItems = useNavMenuItems();
  const siteLinks = useSiteLinks();
  const navigate = useNavigate();
  const location = useLocation();

  // Site links get their own keys: the console link points at a page the console groups list too.
  const items: MenuProps['items'] = [
    {
      type: 'group',
      key: 'site',
      label: t('site'),
      children: siteLinks.map(({ key, label }) => ({ key: SITE_PREFIX + key, label })),
    },
    ...consoleItems,
  ];
  const current = selectedNavKey(location.pathname);

  const onSelect = ({ key }: { key: string }) => {
    setOpen(false);
    const link = siteLinks.find((l) => SITE_PREFIX + l.key === key);
    if (link?.href) window.open(link.href, '_blank', 'noreferrer');
    else navigate(link ? link.key : key);
  };

  return (
    <>
      <Button
        type="text"
        shape="circle"
        icon={<MenuOutlined />}
        aria-label={t('openMenu')}
        data-testid="mobile-menu-button"
        onClick={() => setOpen(true)}
      />
      <Drawer
        placement="left"
        size={260}
        open={open}
        onClose={() => setOpen(false)}
        title={t('menu')}
        styles={{ body: { padding: 0 } }}
      >
        <nav data-testid="mobile-menu">
          <Menu
            mode="inline"
            selectedKeys={[current, SITE_PREFIX + current]}
            items={items}
            onClick={onSelect}
            style={{ borderInlineEnd: 'none' }}
          />
        </nav>
      </Drawer>
    </>
  );
}
