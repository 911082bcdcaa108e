// A finished video task's player (issue 45): an HTML video of its result, with its length, size and price. A video
// behind the gateway's content route is read with the console session (its headers, which a <video> element cannot
// send) into a blob the player shows; an upstream's address is played directly.
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Alert, Descriptions, Modal, Spin } from 'antd';
import { renderQuotaSum } from '../../lib/render.js';
import { TASKLOG_NS } from './i18n.js';
import { videoShape, videoSource, type TaskRow } from './logic.js';
import { useVideoBlob } from './queries.js';

type Loaded = { state: 'loading' } | { state: 'ready'; src: string } | { state: 'failed' };

/** The player's source: the upstream's URL at once, or the console route's bytes as an object URL (revoked after). */
function useVideoSrc(row: TaskRow | null): Loaded {
  const source = row ? videoSource(row) : null;
  const blob = useVideoBlob(source?.viaConsole ? source.url : null);
  const [objectUrl, setObjectUrl] = useState('');
  useEffect(() => {
    if (!blob.data) return;
    const made = URL.createObjectURL(blob.data);
    setObjectUrl(made);
    return () => {
      URL.revokeObjectURL(made);
      setObjectUrl('');
    };
  }, [blob.data]);
  if (!source) return { state: 'loading' };
  if (!source.viaConsole) return { state: 'ready', src: source.url };
  if (blob.isError) return { state: 'failed' };
  return objectUrl ? { state: 'ready', src: objectUrl } : { state: 'loading' };
}

export default function TaskVideoModal({
  row,
  phone,
  onClose,
}: {
  row: TaskRow | null;
  phone: boolean;
  onClose(): void;
}) {
  const { t } = useTranslation(TASKLOG_NS);
  const loaded = useVideoSrc(row);
  // an address the browser cannot play (expired, or one that needs the upstream's key, as Veo's): said, not a blank box
  const [broken, setBroken] = useState('');
  const shape = row ? videoShape(row) : { seconds: null, size: '' };
  return (
    <Modal
      open={!!row}
      title={t('video.title', { id: row?.task_id ?? '' })}
      footer={null}
      onCancel={onClose}
      width={phone ? '100%' : 800}
      destroyOnHidden
    >
      {loaded.state === 'failed' || (loaded.state === 'ready' && broken === loaded.src) ? (
        <Alert type="error" showIcon message={t('video.loadFailed')} data-testid="video-failed" />
      ) : loaded.state === 'loading' ? (
        <Spin data-testid="video-loading" />
      ) : (
        <video
          controls
          src={loaded.src}
          onError={() => setBroken(loaded.src)}
          data-testid="task-video"
          style={{ width: '100%', maxHeight: '60vh', background: '#000' }}
        />
      )}
      <Descriptions size="small" column={phone ? 1 : 3} style={{ marginTop: 12 }}>
        <Descriptions.Item label={t('video.length')}>
          <span data-testid="video-seconds">{shape.seconds === null ? '-' : t('seconds', { n: shape.seconds })}</span>
        </Descriptions.Item>
        <Descriptions.Item label={t('video.size')}>
          <span data-testid="video-size">{shape.size || '-'}</span>
        </Descriptions.Item>
        <Descriptions.Item label={t('video.price')}>
          <span data-testid="video-price">{row ? renderQuotaSum(row.quota) : '-'}</span>
        </Descriptions.Item>
      </Descriptions>
    </Modal>
  );
}
