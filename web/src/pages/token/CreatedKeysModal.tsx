// The keys of the tokens just created, shown once in a dialog with their copy buttons (new-api shows the new key the
// same way): in the list a key sits far right, behind a sideways scroll on a laptop screen.
import { Button, Flex, List, Modal, Typography } from 'antd';
import { CopyOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';

export default function CreatedKeysModal(props: {
  keys: string[] | null;
  onCopy(text: string): void;
  onClose(): void;
}) {
  const { keys, onCopy, onClose } = props;
  const { t } = useTranslation('token');
  const shown = (keys ?? []).map((k) => (k.startsWith('sk-') ? k : `sk-${k}`));
  return (
    <Modal
      open={shown.length > 0}
      title={shown.length > 1 ? t('createdKeys.titleMany', { n: shown.length }) : t('createdKeys.title')}
      onCancel={onClose}
      destroyOnHidden
      footer={
        <Flex justify="end" gap={8}>
          {shown.length > 1 && (
            <Button
              icon={<CopyOutlined />}
              onClick={() => onCopy(shown.join('\n'))}
              data-testid="created-keys-copy-all"
            >
              {t('createdKeys.copyAll')}
            </Button>
          )}
          <Button type="primary" onClick={onClose} data-testid="created-keys-close">
            {t('createdKeys.close')}
          </Button>
        </Flex>
      }
      data-testid="created-keys"
    >
      <Typography.Paragraph type="secondary">{t('createdKeys.hint')}</Typography.Paragraph>
      <List
        size="small"
        dataSource={shown}
        style={{ maxHeight: 320, overflowY: 'auto' }}
        renderItem={(key) => (
          <List.Item
            actions={[
              <Button
                key="copy"
                size="small"
                icon={<CopyOutlined />}
                onClick={() => onCopy(key)}
                data-testid="created-key-copy"
              >
                {t('createdKeys.copy')}
              </Button>,
            ]}
          >
            <Typography.Text code style={{ wordBreak: 'break-all' }} data-testid="created-key">
              {key}
            </Typography.Text>
          </List.Item>
        )}
      />
    </Modal>
  );
}
