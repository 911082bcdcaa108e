// A side drawer holding an edit form: title, Cancel / Submit footer with the saving state, and a spinner while the
// record loads. Props: open, onClose, title, width (px), loading (record loading), saving (submit running),
// onSubmit (called by Submit; its rejection is already toasted by the api client), cancelText / submitText,
// testId (sets `${testId}-submit` on the Submit button), children (the form).
import type { ReactNode } from 'react';
import { Button, Drawer, Space, Spin } from 'antd';
import { quiet } from './quiet.js';

export interface FormDrawerProps {
  open: boolean;
  onClose: () => void;
  title: ReactNode;
  width: number;
  loading?: boolean;
  saving: boolean;
  onSubmit: () => Promise<void>;
  cancelText: ReactNode;
  submitText: ReactNode;
  testId?: string;
  children: ReactNode;
}

export function FormDrawer(p: FormDrawerProps) {
  return (
    <Drawer
      open={p.open}
      onClose={p.onClose}
      size={p.width}
      destroyOnHidden
      title={p.title}
      footer={
        <Space style={{ float: 'right' }}>
          <Button onClick={p.onClose}>{p.cancelText}</Button>
          <Button
            type="primary"
            loading={p.saving}
            onClick={() => quiet(p.onSubmit())}
            data-testid={p.testId ? `${p.testId}-submit` : undefined}
          >
            {p.submitText}
          </Button>
        </Space>
      }
    >
      <Spin spinning={!!p.loading}>{p.children}</Spin>
    </Drawer>
  );
}
