// Route table (spec §2). Pages are lazy-loaded so each becomes its own chunk; the shell (AppLayout) and the guards
// are in the entry chunk.
import { createBrowserRouter, Navigate, type RouteObject } from 'react-router';
import AppLayout from './components/AppLayout.js';
import RequireAuth from './components/RequireAuth.js';
import RouteError from './components/RouteError.js';

type PageModule = { default: React.ComponentType };
const page = (load: () => Promise<PageModule>) => async () => ({ Component: (await load()).default });

export const routes: RouteObject[] = [
  {
    path: '/',
    element: <AppLayout />,
    errorElement: <RouteError />,
    children: [
      { index: true, lazy: page(() => import('./pages/home/index.js')) },
      { path: 'setup', lazy: page(() => import('./pages/setup/index.js')) },
      { path: 'login', lazy: page(() => import('./pages/auth/Login.js')) },
      { path: 'register', lazy: page(() => import('./pages/auth/Register.js')) },
      { path: 'reset', lazy: page(() => import('./pages/auth/PasswordReset.js')) },
      { path: 'user/reset', lazy: page(() => import('./pages/auth/PasswordResetConfirm.js')) },
      // GitHub, Linux DO, OIDC and Discord send the browser back here (the page name is the provider).
      { path: 'oauth/:provider', lazy: page(() => import('./pages/oauth/Callback.js')) },
      { path: 'about', lazy: page(() => import('./pages/about/index.js')) },
      { path: 'pricing', lazy: page(() => import('./pages/pricing/index.js')) },
      { path: 'chat/:id?', lazy: page(() => import('./pages/chat/ChatPage.js')) },
      // new-api's console entry path; here the console starts at the dashboard
      { path: 'console', element: <Navigate to="/detail" replace /> },
      {
        element: <RequireAuth />,
        children: [
          { path: 'personal', lazy: page(() => import('./pages/personal/index.js')) },
          { path: 'user', lazy: page(() => import('./pages/user/index.js')) },
          { path: 'user/edit/:id', lazy: page(() => import('./pages/user/index.js')) },
          { path: 'user/edit', lazy: page(() => import('./pages/user/index.js')) },
          { path: 'channel', lazy: page(() => import('./pages/channel/index.js')) },
          { path: 'channel/edit/:id', lazy: page(() => import('./pages/channel/index.js')) },
          { path: 'channel/add', lazy: page(() => import('./pages/channel/index.js')) },
          { path: 'token', lazy: page(() => import('./pages/token/index.js')) },
          { path: 'log', lazy: page(() => import('./pages/log/index.js')) },
          { path: 'midjourney', lazy: page(() => import('./pages/midjourney/index.js')) },
          { path: 'task', lazy: page(() => import('./pages/task/index.js')) },
          { path: 'detail', lazy: page(() => import('./pages/detail/index.js')) },
          { path: 'playground', lazy: page(() => import('./pages/playground/index.js')) },
          { path: 'redemption', lazy: page(() => import('./pages/redemption/index.js')) },
          { path: 'subscription', lazy: page(() => import('./pages/subscription/index.js')) },
          { path: 'topup', lazy: page(() => import('./pages/topup/index.js')) },
          { path: 'setting', lazy: page(() => import('./pages/setting/index.js')) },
          { path: 'chat2link', lazy: page(() => import('./pages/chat/Chat2Link.js')) },
        ],
      },
      { path: '*', lazy: page(() => import('./pages/not-found/index.js')) },
    ],
  },
];

export function createRouter() {
  return createBrowserRouter(routes);
}
