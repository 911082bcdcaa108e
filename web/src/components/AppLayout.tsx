// App shell (spec §2 Layout): top bar, sidebar, content outlet and footer, plus the setup gate
// (every route goes to /setup until status.setup is true). No props; rendered as the root route element.
import { useEffect, useMemo, useState } from 'react';
import { Grid, Layout, Spin, theme } from 'antd';
import { Navigate, Outlet, useLocation } from 'react-router';
import { useStatus } from '../context/status.js';
import { useUser } from '../context/user.js';
import HeaderBar from './HeaderBar.js';
import { DefaultPasswordBanner } from './default-password/index.js';
import SiderBar from './SiderBar.js';
import Footer from './Footer.js';

export const SIDEBAR_KEY = 'sidebar-collapsed';
const NO_SIDEBAR = [/^\/$/, /^\/chat(\/|$)/, /^\/setup(\/|$)/];

function initialCollapsed(defaultCollapse: boolean | undefined): boolean {
  const saved = localStorage.getItem(SIDEBAR_KEY);
  if (saved === 'true' || saved === 'false') return saved === 'true';
  return !!defaultCollapse;
}

export default function AppLayout() {
  const { status, loaded } = useStatus();
  const { user } = useUser();
  const location = useLocation();
  const screens = Grid.useBreakpoint();
  const { token } = theme.useToken();
  const [collapsed, setCollapsed] = useState(() => initialCollapsed(status.default_collapse_sidebar));

  useEffect(() => {
    localStorage.setItem(SIDEBAR_KEY, String(collapsed));
  }, [collapsed]);

  const isMobile = screens.md === false;
  const showSider = useMemo(
    () => !!user && !isMobile && !NO_SIDEBAR.some((re) => re.test(location.pathname)),
    [user, isMobile, location.pathname],
  );

  // Decide the setup redirect only on a fresh answer, so a stale cached status cannot bounce the user around.
  if (!loaded && status.setup !== true) {
    return (
      <div style={{ height: '100vh', display: 'grid', placeItems: 'center' }}>
        <Spin size="large" />
      </div>
    );
  }
  if (status.setup === false && location.pathname !== '/setup') return <Navigate to="/setup" replace />;

  return (
    <Layout style={{ minHeight: '100vh' }}>
      <HeaderBar />
      <Layout hasSider={showSider}>
        {showSider ? <SiderBar collapsed={collapsed} onCollapse={setCollapsed} /> : null}
        <Layout style={{ background: token.colorBgLayout }}>
          <Layout.Content style={{ padding: isMobile ? 12 : 24, minHeight: 'calc(100vh - 64px - 70px)' }}>
            <DefaultPasswordBanner />
            <Outlet />
          </Layout.Content>
          <Footer />
        </Layout>
      </Layout>
    </Layout>
  );
}
