// Theme-aware toasts, notifications and confirm dialogs for code inside and outside React.
// antd's static `message` / `notification` / `Modal.confirm` render outside the ConfigProvider tree, so they ignore
// the dark algorithm and the locale. <FeedbackBridge/> (mounted once inside antd's <App>) stores the App.useApp()
// instances here; `message`, `notification` and `modal` forward every call to them. Until the bridge is mounted
// (unit tests, errors before the first render) they fall back to antd's static functions.
import { useEffect } from 'react';
import { App, Modal, message as staticMessage, notification as staticNotification } from 'antd';

type AppApi = ReturnType<typeof App.useApp>;
export type MessageApi = AppApi['message'];
export type NotificationApi = AppApi['notification'];
export type ModalApi = AppApi['modal'];

let instances: AppApi | null = null;

/** True while a bridge is mounted (the forwarded calls use the context-aware instances). */
export function feedbackBridged(): boolean {
  return instances !== null;
}

function forward<T extends object>(pick: (app: AppApi | null) => T): T {
  return new Proxy({} as T, {
    get(_target, key) {
      const target = pick(instances) as Record<PropertyKey, unknown>;
      const v = target[key];
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

export const message: MessageApi = forward((app) => app?.message ?? (staticMessage as MessageApi));
export const notification: NotificationApi = forward(
  (app) => app?.notification ?? (staticNotification as NotificationApi),
);
export const modal: ModalApi = forward((app) => app?.modal ?? (Modal as unknown as ModalApi));

/** Renders nothing; must sit inside antd's <App>. */
export function FeedbackBridge(): null {
  const app = App.useApp();
  // Stored during render (not in an effect) so the effects of sibling providers that toast on their first run
  // (e.g. a failed /api/status) already reach the themed instances.
  instances = app;
  useEffect(() => {
    instances = app;
    return () => {
      if (instances === app) instances = null;
    };
  }, [app]);
  return null;
}
