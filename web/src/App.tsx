// Providers around the router: i18n-aware antd ConfigProvider (light/dark algorithm, the language's antd locale),
// TanStack Query, status, user and theme contexts. FeedbackBridge hands antd's context-aware message/notification/
// modal to lib/feedback.ts, so toasts follow the theme and locale.
import { useMemo, type ReactNode } from 'react';
import { App as AntApp, ConfigProvider, theme } from 'antd';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { StatusProvider } from './context/status.js';
import { UserProvider } from './context/user.js';
import { ThemeProvider, useTheme } from './context/theme.js';
import { FeedbackBridge } from './lib/feedback.js';
import { antdLocale } from './i18n/antd-locale.js';
import { languageOf } from './i18n/languages.js';

const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } },
});

function ThemedConfig({ children }: { children: ReactNode }) {
  const { mode } = useTheme();
  const { i18n } = useTranslation();
  const locale = antdLocale(languageOf(i18n.language) ?? 'zh');
  const themeConfig = useMemo(
    () => ({ algorithm: mode === 'dark' ? theme.darkAlgorithm : theme.defaultAlgorithm }),
    [mode],
  );
  return (
    <ConfigProvider theme={themeConfig} locale={locale}>
      <AntApp>
        <FeedbackBridge />
        {children}
      </AntApp>
    </ConfigProvider>
  );
}

export function AppProviders({ children }: { children: ReactNode }) {
  return (
    <QueryClientProvider client={queryClient}>
      <ThemeProvider>
        <ThemedConfig>
          <StatusProvider>
            <UserProvider>{children}</UserProvider>
          </StatusProvider>
        </ThemedConfig>
      </ThemeProvider>
    </QueryClientProvider>
  );
}
