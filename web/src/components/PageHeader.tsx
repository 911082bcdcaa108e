// Page title row used at the top of console pages.
// Props:
//   title: ReactNode   – heading text (h4)
//   extra?: ReactNode  – right-aligned actions (buttons)
//   children?: ReactNode – optional description line under the title
import type { ReactNode } from 'react';
import { Flex, Typography } from 'antd';

export interface PageHeaderProps {
  title: ReactNode;
  extra?: ReactNode;
  children?: ReactNode;
}

export default function PageHeader({ title, extra, children }: PageHeaderProps) {
  return (
    <div style={{ marginBottom: 16 }}>
      <Flex justify="space-between" align="center" wrap gap={8}>
        <Typography.Title level={4} style={{ margin: 0 }}>
          {title}
        </Typography.Title>
        {extra ? (
          <Flex gap={8} wrap>
            {extra}
          </Flex>
        ) : null}
      </Flex>
      {children ? (
        <Typography.Paragraph type="secondary" style={{ marginTop: 8, marginBottom: 0 }}>
          {children}
        </Typography.Paragraph>
      ) : null}
    </div>
  );
}
