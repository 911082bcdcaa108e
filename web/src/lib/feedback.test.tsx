import { afterEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, render } from '@testing-library/react';
import { App, ConfigProvider, message as staticMessage, notification as staticNotification, theme } from 'antd';
import i18n from '../i18n/index.js';
import { FeedbackBridge, feedbackBridged, message, modal, notification } from './feedback.js';

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

type AppApi = ReturnType<typeof App.useApp>;

function mount(): { app: () => AppApi } {
  let captured: AppApi | null = null;
  function Capture() {
    captured = App.useApp();
    return null;
  }
  render(
    <ConfigProvider theme={{ algorithm: theme.darkAlgorithm }}>
      <App>
        <FeedbackBridge />
        <Capture />
      </App>
    </ConfigProvider>,
  );
  return { app: () => captured! };
}

describe('feedback bridge', () => {
  it('falls back to the static message before a bridge is mounted', () => {
    const spy = vi.spyOn(staticMessage, 'error').mockImplementation(() => (() => {}) as never);
    expect(feedbackBridged()).toBe(false);
    void message.error('before');
    expect(spy).toHaveBeenCalledWith('before');
  });

  it('forwards message, notification and modal to the App.useApp() instances while mounted', () => {
    const { app } = mount();
    expect(feedbackBridged()).toBe(true);
    const staticSpy = vi.spyOn(staticMessage, 'success');
    const ctx = app();
    const success = vi.spyOn(ctx.message, 'success');
    const warn = vi.spyOn(ctx.notification, 'warning');
    const confirm = vi.spyOn(ctx.modal, 'confirm');
    act(() => {
      void message.success('saved');
      notification.warning({ title: 'low quota' });
      modal.confirm({ title: 'sure?' });
    });
    expect(success).toHaveBeenCalledWith('saved');
    expect(warn).toHaveBeenCalledWith({ title: 'low quota' });
    expect(confirm).toHaveBeenCalledWith({ title: 'sure?' });
    expect(staticSpy).not.toHaveBeenCalled();
  });

  it('drops the instances on unmount', () => {
    mount();
    expect(feedbackBridged()).toBe(true);
    cleanup();
    expect(feedbackBridged()).toBe(false);
  });

  it('shows the server messages of toasts and notifications in English while the console is in English', async () => {
    const error = vi.spyOn(staticMessage, 'error').mockImplementation(() => (() => {}) as never);
    const warning = vi.spyOn(staticNotification, 'warning').mockImplementation(() => undefined);
    await i18n.changeLanguage('en');
    try {
      void message.error('SMTP 服务器未配置');
      void message.error({ content: '该兑换码已被使用', duration: 3 });
      void message.error('Something in English');
      notification.warning({ title: '您的额度即将用尽', description: '原密码错误' });
    } finally {
      await i18n.changeLanguage('zh');
    }
    expect(error).toHaveBeenNthCalledWith(1, 'The SMTP server is not configured');
    expect(error).toHaveBeenNthCalledWith(2, { content: 'This redemption code has already been used', duration: 3 });
    expect(error).toHaveBeenNthCalledWith(3, 'Something in English');
    expect(warning).toHaveBeenCalledWith({
      title: 'Your quota is running out',
      description: 'The current password is wrong',
    });
    void message.error('SMTP 服务器未配置');
    expect(error).toHaveBeenLastCalledWith('SMTP 服务器未配置');
  });
});
