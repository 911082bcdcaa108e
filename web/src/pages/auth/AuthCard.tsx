// Centered card used by the login/register/reset pages. Props: title (ReactNode), children.
import type { ReactNode } from 'react';
import { Card, Flex, Typography } from 'antd';
import { useStatus } from '../../context/status.js';

export default function AuthCard({ title, children }: { title: ReactNode; children: ReactNode }) {
  const { status } = useStatus();
  return (
    <Flex justify="center" style={{ paddingTop: 32 }}>
      <Card style={{ width: '100%', maxWidth: 420 }}>
        <Flex vertical align="center" gap={8} style={{ marginBottom: 16 }}>
          <img src={status.logo || '/logo.svg'} alt="" width={48} height={48} />
          <Typography.Title level={3} style={{ margin: 0 }}>
            {title}
          </Typography.Title>
        </Flex>
        {children}
      </Card>
    </Flex>
  );
}
