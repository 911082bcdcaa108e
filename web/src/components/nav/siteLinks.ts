// The site-wide links of the top bar (home, console, pricing, docs, about). On a phone the top bar has no room for
// them, so the menu drawer lists them above the console groups.
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { useStatus } from '../../context/status.js';

export interface SiteLink {
  /** Route, or 'docs' for the external documentation link. */
  key: string;
  label: string;
  /** Set for a link that leaves the console (opened in a new tab). */
  href?: string;
}

export function useSiteLinks(): SiteLink[] {
  const { t, i18n } = useTranslation();
  const { status } = useStatus();
  // the dashboard needs data export on; without it the console starts at the tokens page
  const consolePath = status.enable_data_export ? '/detail' : '/token';
  return useMemo(
    () => [
      { key: '/', label: t('nav.home') },
      { key: consolePath, label: t('nav.console') },
      { key: '/pricing', label: t('nav.pricing') },
      ...(status.docs_link ? [{ key: 'docs', label: t('nav.docs'), href: status.docs_link }] : []),
      { key: '/about', label: t('nav.about') },
    ],
    // eslint-disable-next-line react-hooks/exhaustive-deps -- labels follow a language switch
    [t, i18n.language, consolePath, status.docs_link],
  );
}
