// A log row's text (prompt, failure reason, the whole record) in full, copyable.
import { Modal, Typography } from 'antd';

export interface ShownText {
  title: string;
  body: string;
}

export default function TaskTextModal({
  text,
  phone,
  onClose,
}: {
  text: ShownText | null;
  phone: boolean;
  onClose(): void;
}) {
  return (
    <Modal open={!!text} title={text?.title} footer={null} onCancel={onClose} width={phone ? '100%' : 720}>
      <Typography.Paragraph copyable={{ text: text?.body ?? '' }}>
        <pre
          style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all', maxHeight: '60vh', overflow: 'auto' }}
          data-testid="tasklog-text"
        >
          {text?.body}
        </pre>
      </Typography.Paragraph>
    </Modal>
  );
}
