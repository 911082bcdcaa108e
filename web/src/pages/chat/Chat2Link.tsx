// /chat2link — sends the browser to a chat client with the user's key and the server address (spec §2). The legacy
// single `chat_link` keeps new-api's settings-in-the-fragment form; otherwise a `Chats` entry is used (`?id=`, default
// the first), filled as on /chat/:id (new-api-compat.md §11.5).
import { useEffect } from 'react';
import { Alert, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { useStatus } from '../../context/status.js';
import { fillChatLink, fillLegacyChatLink, pickChat, serverAddress } from './links.js';
import { useChatKey } from './useChatKey.js';
import { NS } from './i18n.js';

/** Where the browser goes; kept as a hook so unit tests can observe it. */
export const chatNavigation = {
  open(url: string): void {
    window.location.href = url;
  },
};

export default function Chat2Link() {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  const [params] = useSearchParams();
  const legacy = typeof status.chat_link === 'string' && status.chat_link.trim() ? status.chat_link.trim() : '';
  const chat = legacy ? { template: '' } : pickChat(status.chats, params.get('id') ?? undefined);
  const key = useChatKey('template' in chat);
  const address = serverAddress(status.server_address);

  const target =
    key.state === 'ready' && 'template' in chat
      ? legacy
        ? fillLegacyChatLink(legacy, key.key, address)
        : fillChatLink(chat.template, key.key, address)
      : '';

  useEffect(() => {
    if (target) chatNavigation.open(target);
  }, [target]);

  if ('problem' in chat) return <Alert type="warning" showIcon title={t(chat.problem)} data-testid="chat-problem" />;
  if (key.state === 'none') return <Alert type="error" showIcon title={t('noToken')} data-testid="chat-problem" />;
  return <Typography.Title level={4}>{t('loading')}</Typography.Title>;
}
