// The ten backup codes, shown once (at setup or after regenerating), with a button copying them all.
import { Button, Flex, Typography } from 'antd';
import { CopyOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { message } from '../../../lib/feedback.js';
import { copyText } from '../../../lib/storage.js';
import { NS } from './i18n.js';

export default function BackupCodes({ codes }: { codes: string[] }) {
  const { t } = useTranslation(NS);
  const copy = async () => {
    if (await copyText(codes.join('\n'))) void message.success(t('copied'));
    else void message.warning(t('copyFailed'));
  };
  return (
    <div data-testid="backup-codes">
      <Flex wrap gap={8} style={{ marginBottom: 8 }}>
        {codes.map((code) => (
          <Typography.Text key={code} code style={{ fontSize: 14 }}>
            {code}
          </Typography.Text>
        ))}
      </Flex>
      <Button size="small" icon={<CopyOutlined />} onClick={() => void copy()}>
        {t('copyCodes')}
      </Button>
    </div>
  );
}
