// Add-user and edit-user side drawers of the users admin page. The edit drawer also edits the caller's own
// profile (userId 'self', route /user/edit): then it reads and writes /api/user/self, where group and quota are
// not editable (new-api UpdateSelf only takes username, display name and password).
import { useEffect, useState } from 'react';
import { Button, Descriptions, Divider, Drawer, Flex, Form, Input, Select, Spin, Typography } from 'antd';
import { message } from '../../lib/feedback.js';
import { useTranslation } from 'react-i18next';
import { api, failureText } from '../../lib/api.js';
import QuotaInput from '../../components/quota-input/QuotaInput.js';
import LimitsSection from '../../components/usage-limits/LimitsSection.js';
import { limitsPath, loadLimits, saveLimits, type LimitSettings } from '../../components/usage-limits/api.js';
import type { AdminUser } from './types.js';
import { NS } from './i18n.js';

interface AddValues {
  username?: string;
  display_name?: string;
  password?: string;
}

export function AddUserDrawer({ open, onClose, onDone }: { open: boolean; onClose(): void; onDone(): void }) {
  const { t } = useTranslation(NS);
  const [form] = Form.useForm<AddValues>();
  const [saving, setSaving] = useState(false);
  const submit = async () => {
    const v = form.getFieldsValue();
    const username = v.username?.trim() ?? '';
    if (!username || !v.password) return void message.error(t('emptyRequired'));
    setSaving(true);
    try {
      const res = await api.post('/api/user/', {
        username,
        display_name: v.display_name?.trim() || username,
        password: v.password,
      });
      if (res.success) {
        void message.success(t('created'));
        form.resetFields();
        onDone();
        onClose();
      } else void message.error(failureText(res, 'error.saveFailed'));
    } finally {
      setSaving(false);
    }
  };
  return (
    <Drawer
      open={open}
      onClose={onClose}
      title={t('addTitle')}
      size={420}
      destroyOnHidden
      footer={
        <Flex justify="end" gap={8}>
          <Button onClick={onClose}>{t('cancel')}</Button>
          <Button type="primary" onClick={submit} loading={saving} data-testid="add-user-submit">
            {t('submit')}
          </Button>
        </Flex>
      }
    >
      <Form form={form} layout="vertical" onFinish={submit}>
        <Form.Item name="username" label={t('username')}>
          <Input placeholder={t('usernamePh')} autoComplete="off" />
        </Form.Item>
        <Form.Item name="display_name" label={t('displayName')}>
          <Input placeholder={t('displayNamePh')} autoComplete="off" />
        </Form.Item>
        <Form.Item name="password" label={t('password')}>
          <Input.Password placeholder={t('passwordPh')} autoComplete="new-password" />
        </Form.Item>
      </Form>
    </Drawer>
  );
}

interface EditValues {
  username: string;
  display_name: string;
  password?: string;
  original_password?: string;
  group: string;
  quota: number;
}

/** A user id, 'self' for the caller's own profile, or null when closed. */
export type EditTarget = number | 'self' | null;

export function EditUserDrawer({
  userId,
  groups,
  onClose,
  onDone,
}: {
  userId: EditTarget;
  groups: string[];
  onClose(): void;
  onDone(): void;
}) {
  const { t } = useTranslation(NS);
  const [form] = Form.useForm<EditValues>();
  const [user, setUser] = useState<AdminUser | null>(null);
  const [saving, setSaving] = useState(false);
  const [limits, setLimits] = useState<LimitSettings>({});
  const [loadedLimits, setLoadedLimits] = useState<LimitSettings>({});
  const self = userId === 'self';
  const userUrl = self ? '/api/user/self' : `/api/user/${userId}`;

  useEffect(() => {
    setUser(null);
    setLimits({});
    setLoadedLimits({});
    if (userId === null) return;
    let alive = true;
    // an admin's editor only: a user does not set their own limits
    if (userId !== 'self')
      void loadLimits(limitsPath('user', userId))
        .then((l) => {
          if (!alive) return;
          setLimits(l);
          setLoadedLimits(l);
        })
        .catch(() => undefined);
    void api.get<AdminUser>(userUrl).then((res) => {
      if (!alive) return;
      if (!res.success) {
        void message.error(res.message);
        onClose();
        return;
      }
      setUser(res.data);
      form.setFieldsValue({
        username: res.data.username,
        display_name: res.data.display_name,
        password: '',
        group: res.data.group,
        quota: res.data.quota,
      });
    });
    return () => {
      alive = false;
    };
  }, [userId, userUrl, form, onClose]);

  const submit = async () => {
    if (!user) return;
    const v = form.getFieldsValue();
    setSaving(true);
    try {
      const body: Record<string, unknown> = self
        ? { username: v.username?.trim(), display_name: v.display_name?.trim() }
        : {
            id: user.id,
            username: v.username?.trim(),
            display_name: v.display_name?.trim(),
            group: v.group,
            quota: Math.trunc(Number(v.quota) || 0),
          };
      if (v.password) body.password = v.password;
      // The server requires the current password for a self-service password change.
      if (self && v.password) body.original_password = v.original_password ?? '';
      const res = await api.put(self ? '/api/user/self' : '/api/user/', body);
      const refused = res.success && !self ? await saveLimits(limitsPath('user', user.id), limits, loadedLimits) : null;
      if (refused) void message.error(refused);
      else if (res.success) {
        void message.success(t('updated'));
        onDone();
        onClose();
      } else void message.error(failureText(res, 'error.updateFailed'));
    } finally {
      setSaving(false);
    }
  };

  const groupOptions = Array.from(new Set([...(user ? [user.group] : []), ...groups])).map((g) => ({
    value: g,
    label: g,
  }));

  return (
    <Drawer
      open={userId !== null}
      onClose={onClose}
      title={t('editTitle')}
      size={460}
      data-testid="edit-user-drawer"
      footer={
        <Flex justify="end" gap={8}>
          <Button onClick={onClose}>{t('cancel')}</Button>
          <Button type="primary" onClick={submit} loading={saving} disabled={!user}>
            {t('submit')}
          </Button>
        </Flex>
      }
    >
      {!user ? (
        <Spin />
      ) : (
        <Form form={form} layout="vertical">
          <Form.Item name="username" label={t('username')}>
            <Input />
          </Form.Item>
          <Form.Item name="display_name" label={t('displayName')}>
            <Input placeholder={t('displayNamePh')} />
          </Form.Item>
          <Form.Item name="password" label={t('password')}>
            <Input.Password placeholder={t('editPasswordPh')} autoComplete="new-password" />
          </Form.Item>
          {self && (
            <Form.Item name="original_password" label={t('originalPassword')}>
              <Input.Password placeholder={t('originalPasswordPh')} autoComplete="current-password" />
            </Form.Item>
          )}
          <Form.Item name="group" label={t('group')}>
            <Select options={groupOptions} showSearch disabled={self} />
          </Form.Item>
          <Form.Item name="quota" label={t('quota')}>
            <QuotaInput placeholder={t('quotaPh')} disabled={self} data-testid="user-quota" />
          </Form.Item>
          {!self && <LimitsSection value={limits} onChange={setLimits} />}
          <Divider />
          <Typography.Text strong>{t('bindings')}</Typography.Text>
          <Descriptions column={1} size="small" style={{ marginTop: 8 }}>
            <Descriptions.Item label={t('email')}>{user.email || '-'}</Descriptions.Item>
            <Descriptions.Item label="GitHub">{user.github_id || '-'}</Descriptions.Item>
            <Descriptions.Item label="OIDC">{user.oidc_id || '-'}</Descriptions.Item>
            <Descriptions.Item label="WeChat">{user.wechat_id || '-'}</Descriptions.Item>
            <Descriptions.Item label="Telegram">{user.telegram_id || '-'}</Descriptions.Item>
            <Descriptions.Item label="Linux DO">{user.linux_do_id || '-'}</Descriptions.Item>
          </Descriptions>
        </Form>
      )}
    </Drawer>
  );
}
