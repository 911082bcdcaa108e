// "Check for updates" button of the system info card: compares the running version with the latest GitHub release
// and shows the release notes (as plain text) when it is newer; offline or rate-limited, it says so and nothing else changes.
// Props:
//   version?: string   – the running version (status.version)
//   repo?: string      – owner/name of the repository (default: VITE_RELEASES_REPO)
import { useState } from 'react';
import { App as AntApp, Button, Modal, Space, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { fetchLatestRelease, isNewer, RELEASES_REPO, type Release } from './releases.js';
import { NS } from './i18n.js';

export default function UpdateCheck({ version, repo = RELEASES_REPO }: { version?: string; repo?: string }) {
  const { t } = useTranslation(NS);
  const { message } = AntApp.useApp();
  const [checking, setChecking] = useState(false);
  const [outcome, setOutcome] = useState<{ text: string; error: boolean } | null>(null);
  const [release, setRelease] = useState<Release | null>(null);

  const check = async () => {
    if (!repo) {
      setOutcome({ text: t('notConfigured'), error: false });
      return;
    }
    setChecking(true);
    try {
      const latest = await fetchLatestRelease(repo);
      if (isNewer(latest.tag, version)) {
        setOutcome({ text: t('available', { tag: latest.tag }), error: false });
        setRelease(latest);
      } else {
        setOutcome({ text: t('latest', { tag: latest.tag }), error: false });
        void message.success(t('latest', { tag: latest.tag }));
      }
    } catch {
      setOutcome({ text: t('failed'), error: true });
      void message.error(t('failed'));
    } finally {
      setChecking(false);
    }
  };

  return (
    <Space wrap>
      <Button size="small" loading={checking} onClick={() => void check()} data-testid="update-check">
        {t('check')}
      </Button>
      {outcome ? (
        <Typography.Text type={outcome.error ? 'danger' : 'secondary'} data-testid="update-outcome">
          {outcome.text}
        </Typography.Text>
      ) : null}
      <Modal
        open={!!release}
        title={release ? t('available', { tag: release.tag }) : ''}
        onCancel={() => setRelease(null)}
        footer={[
          <Button key="close" onClick={() => setRelease(null)}>
            {t('close')}
          </Button>,
          <Button key="open" type="primary" href={release?.url} target="_blank" rel="noopener noreferrer">
            {t('download')}
          </Button>,
        ]}
      >
        {release ? (
          <>
            <Typography.Paragraph type="secondary">{t('current', { version: version || '-' })}</Typography.Paragraph>
            <Typography.Text strong>{release.name}</Typography.Text>
            {/* release notes come from outside: shown as text, never as HTML */}
            <pre style={{ whiteSpace: 'pre-wrap', maxHeight: 360, overflow: 'auto' }}>{release.notes}</pre>
          </>
        ) : null}
      </Modal>
    </Space>
  );
}
