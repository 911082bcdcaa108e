// The announcement dialog; loaded only when there is an announcement to show, so the Markdown renderer stays out of
// the entry chunk.
// Props:
//   content: string          – the announcement (Markdown, HTML or a URL, as the other content options)
//   onClose(): void          – the user dismissed it
import { Button, Modal } from 'antd';
import { useTranslation } from 'react-i18next';
import RichContent from '../RichContent.js';
import { NS } from './i18n.js';

export default function NoticeModal({ content, onClose }: { content: string; onClose(): void }) {
  const { t } = useTranslation(NS);
  return (
    <Modal
      open
      title={t('title')}
      onCancel={onClose}
      footer={
        <Button type="primary" onClick={onClose}>
          {t('close')}
        </Button>
      }
      width={640}
      data-testid="notice-modal"
    >
      <div data-testid="notice-content" style={{ maxHeight: '60vh', overflow: 'auto' }}>
        <RichContent content={content} title={t('title')} />
      </div>
    </Modal>
  );
}
