import { afterEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, render } from '@testing-library/react';
import { App, ConfigProvider, message as staticMessage, theme } from 'antd';
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
});
