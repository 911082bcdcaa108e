// Add-user and edit-user side drawers of the users admin page. The edit drawer also edits the caller's own
// profile (userId 'self', route /user/edit): then it reads and writes /api/user/self, where group and quota are
// not editable (new-api UpdateSelf only takes username, display name and password).
import { useEffect, useState } from 'react';
import { Button, Descriptions, Divider, Drawer, Flex, Form, Input, Select, Spin, Typography } from 'antd';
import { message } from '../../lib/feedback.js';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { api, failureText, HttpError } from '../../lib/api.js';
import { SELF_KEY, selfQuery } from '../../lib/self.js';
import QuotaInput from '../../components/quota-input/QuotaInput.js';
import LimitsSection from '../../components/usage-limits/LimitsSection.js';
import { limitsPath, loadLimits, saveLimits, type LimitSettings } from '../../components/usage-limits/api.js';
import type { AdminUser } from './types.js';
import UserSubscriptions from './UserSubscriptions.js';
import { NS } from './i18n.js';

interface AddValues {
  username?: string;
  display_name?: string;
  password?: string;
}

/** Every users query (the list, searches, the user being edited) starts with this key. */
export const USERS_KEY = ['users'] as const;

export function AddUserDrawer({ open, onClose }: { open: boolean; onClose(): void }) {
  const { t } = useTranslation(NS);
  const [form] = Form.useForm<AddValues>();
  const qc = useQueryClient();
  const create = useMutation({
    mutationFn: (body: { username: string; display_name: string; password: string }) => api.post('/api/user/', body),
    onSuccess: (res) => {
      if (!res.success) return void message.error(failureText(res, 'error.saveFailed'));
      void message.success(t('created'));
      form.resetFields();
      void qc.invalidateQueries({ queryKey: USERS_KEY });
      onClose();
    },
  });
  const saving = create.isPending;
  const submit = async () => {
    const v = form.getFieldsValue();
    const username = v.username?.trim() ?? '';
    if (!username || !v.password) return void message.error(t('emptyRequired'));
    // a thrown call was toasted by the api client
    await create
      .mutateAsync({ username, display_name: v.display_name?.trim() || username, password: v.password })
      .catch(() => undefined);
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
        <Typography.Paragraph type="secondary" data-testid="add-user-quota-note">
          {t('addQuotaNote')}
        </Typography.Paragraph>
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

export function EditUserDrawer({ userId, groups, onClose }: { userId: EditTarget; groups: string[]; onClose(): void }) {
  const { t } = useTranslation(NS);
  const [form] = Form.useForm<EditValues>();
  const [limits, setLimits] = useState<LimitSettings>({});
  const qc = useQueryClient();
  const self = userId === 'self';
  const other = userId !== null && userId !== 'self' ? userId : null;

  // the form is a copy of the user: read when the drawer opens, not refreshed under the operator's typing
  const fresh = { refetchOnWindowFocus: false, retry: false } as const;
  const selfUser = useQuery({ ...selfQuery, ...fresh, enabled: self });
  const otherUser = useQuery({
    ...fresh,
    gcTime: 0,
    queryKey: [...USERS_KEY, 'item', other],
    enabled: other !== null,
    queryFn: async () => {
      const res = await api.get<AdminUser>(`/api/user/${other}`);
      if (!res.success) throw new Error(res.message);
      return res.data;
    },
  });
  // an admin's editor only: a user does not set their own limits
  const userLimits = useQuery({
    ...fresh,
    gcTime: 0,
    queryKey: [...USERS_KEY, 'item-limits', other],
    enabled: other !== null,
    queryFn: () => loadLimits(limitsPath('user', other!)),
  });
  const read = self ? selfUser : otherUser;
  const user = userId === null ? null : ((read.data as AdminUser | undefined) ?? null);
  const loadedLimits = (other !== null && userLimits.data) || {};
  const readError = userId === null ? null : read.error;

  useEffect(() => {
    if (!user) return;
    form.setFieldsValue({
      username: user.username,
      display_name: user.display_name,
      password: '',
      group: user.group,
      quota: user.quota,
    });
  }, [user, form]);
  useEffect(() => setLimits(userLimits.data ?? {}), [userLimits.data]);
  useEffect(() => {
    if (!readError) return;
    // an HTTP failure was toasted by the api client; a refusal in the envelope is said here
    if (!(readError instanceof HttpError)) void message.error(readError.message);
    onClose();
  }, [readError, onClose]);

  const update = useMutation({
    mutationFn: async ({ id, body }: { id: number; body: Record<string, unknown> }) => {
      const res = await api.put(self ? '/api/user/self' : '/api/user/', body);
      const refused = res.success && !self ? await saveLimits(limitsPath('user', id), limits, loadedLimits) : null;
      return { res, refused };
    },
    onSuccess: ({ res, refused }) => {
      if (refused) return void message.error(refused);
      if (!res.success) return void message.error(failureText(res, 'error.updateFailed'));
      void message.success(t('updated'));
      void qc.invalidateQueries({ queryKey: self ? SELF_KEY : USERS_KEY });
      onClose();
    },
  });
  const saving = update.isPending;

  const submit = async () => {
    if (!user) return;
    const v = form.getFieldsValue();
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
    // a thrown call was toasted by the api client
    await update.mutateAsync({ id: user.id, body }).catch(() => undefined);
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
          {other !== null && <UserSubscriptions userId={other} />}
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
