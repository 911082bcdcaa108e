// Console sidebar (spec §2 Layout), 200 px wide, 60 px collapsed. Its groups and visibility rules are in
// nav/navGroups.tsx, shared with the phone menu.
// Props:
//   collapsed: boolean                    – current collapsed state
//   onCollapse(collapsed: boolean): void  – called by the collapse trigger
import { Layout, Menu } from 'antd';
import { useLocation, useNavigate } from 'react-router';
import { selectedNavKey, useNavMenuItems } from './nav/navGroups.js';

export interface SiderBarProps {
  collapsed: boolean;
  onCollapse(collapsed: boolean): void;
}

export default function SiderBar({ collapsed, onCollapse }: SiderBarProps) {
  const items = useNavMenuItems();
  const navigate = useNavigate();
  const location = useLocation();

  return (
    <Layout.Sider
      width={200}
      collapsedWidth={60}
      collapsible
      collapsed={collapsed}
      onCollapse={onCollapse}
      theme="light"
      data-testid="sidebar"
      className="console-sider"
      // stays under the sticky header while a long page scrolls (issue 46): its menu scrolls on its own if taller
      style={{
        borderRight: '1px solid rgba(128,128,128,0.15)',
        position: 'sticky',
        top: 64,
        alignSelf: 'flex-start',
        height: 'calc(100vh - 64px)',
      }}
    >
      <Menu
        mode="inline"
        selectedKeys={[selectedNavKey(location.pathname)]}
        items={items}
        onClick={({ key }) => navigate(key)}
        style={{ borderInlineEnd: 'none' }}
      />
    </Layout.Sider>
  );
}
