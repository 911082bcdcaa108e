// Theme-aware toasts, notifications and confirm dialogs for code inside and outside React.
// antd's static `message` / `notification` / `Modal.confirm` render outside the ConfigProvider tree, so they ignore
// the dark algorithm and the locale. <FeedbackBridge/> (mounted once inside antd's <App>) stores the App.useApp()
// instances here; `message`, `notification` and `modal` forward every call to them. Until the bridge is mounted
// (unit tests, errors before the first render) they fall back to antd's static functions.
// Texts shown through `message` and `notification` that are the server's Chinese messages appear in English when the
// console is in English (translateServerMessage), so every toast of a server answer is in the chosen language.
import { useEffect } from 'react';
import { App, Modal, message as staticMessage, notification as staticNotification } from 'antd';
import { translateServerMessage } from '../i18n/server-message.js';

type AppApi = ReturnType<typeof App.useApp>;
export type MessageApi = AppApi['message'];
export type NotificationApi = AppApi['notification'];
export type ModalApi = AppApi['modal'];

let instances: AppApi | null = null;

/** True while a bridge is mounted (the forwarded calls use the context-aware instances). */
export function feedbackBridged(): boolean {
  return instances !== null;
}

type Translate = (arg: unknown) => unknown;

function forward<T extends object>(pick: (app: AppApi | null) => T, translateFirst?: Translate): T {
  return new Proxy({} as T, {
    get(_target, key) {
      const target = pick(instances) as Record<PropertyKey, unknown>;
      const v = target[key];
      if (typeof v !== 'function') return v;
      const fn = (v as (...a: unknown[]) => unknown).bind(target);
      if (!translateFirst) return fn;
      return (first: unknown, ...rest: unknown[]) => fn(translateFirst(first), ...rest);
    },
  });
}

/** A message's content (a string, or the `content` of its options) in the console's language. */
function translateMessageArg(arg: unknown): unknown {
  if (typeof arg === 'string') return translateServerMessage(arg);
  if (arg && typeof arg === 'object' && typeof (arg as { content?: unknown }).content === 'string') {
    const options = arg as { content: string };
    const content = translateServerMessage(options.content);
    return content === options.content ? arg : { ...options, content };
  }
  return arg;
}

/** A notification's title and description in the console's language. */
function translateNotificationArg(arg: unknown): unknown {
  if (!arg || typeof arg !== 'object') return arg;
  const options = { ...(arg as Record<string, unknown>) };
  for (const field of ['title', 'message', 'description']) {
    if (typeof options[field] === 'string') options[field] = translateServerMessage(options[field]);
  }
  return Object.keys(options).every((k) => options[k] === (arg as Record<string, unknown>)[k]) ? arg : options;
}

export const message: MessageApi = forward((app) => app?.message ?? (staticMessage as MessageApi), translateMessageArg);
export const notification: NotificationApi = forward(
  (app) => app?.notification ?? (staticNotification as NotificationApi),
  translateNotificationArg,
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
