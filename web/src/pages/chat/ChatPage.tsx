// /chat/:id — embeds the id-th `Chats` link (default the first) in an iframe with the user's key and the server address
// filled in (spec §2 "Chat page and redirect page"). The route is public as in new-api, but a link needs a key, so a
// visitor who is not signed in is sent to the login page first.
import { Alert, Flex, Spin } from 'antd';
import { useTranslation } from 'react-i18next';
import { Navigate, useLocation, useParams } from 'react-router';
import { useStatus } from '../../context/status.js';
import { useUser } from '../../context/user.js';
import { fillChatLink, pickChat, serverAddress } from './links.js';
import { useChatKey } from './useChatKey.js';
import { NS } from './i18n.js';

export default function ChatPage() {
  const { t } = useTranslation(NS);
  const { id } = useParams();
  const { status } = useStatus();
  const { user } = useUser();
  const location = useLocation();
  const chat = pickChat(status.chats, id);
  const key = useChatKey(!!user && 'template' in chat);

  if (!user) return <Navigate to="/login" replace state={{ from: location.pathname + location.search }} />;
  if ('problem' in chat) return <Alert type="warning" showIcon title={t(chat.problem)} data-testid="chat-problem" />;
  if (key.state === 'none') return <Alert type="error" showIcon title={t('noToken')} data-testid="chat-problem" />;
  if (key.state === 'loading') {
    return (
      <Flex justify="center" style={{ paddingTop: 48 }}>
        <Spin description={t('redirecting')}>
          <div style={{ width: 120, height: 60 }} />
        </Spin>
      </Flex>
    );
  }
  return (
    <iframe
      data-testid="chat-frame"
      src={fillChatLink(chat.template, key.key, serverAddress(status.server_address))}
      title={t('title')}
      allow="camera;microphone"
      style={{ width: '100%', height: 'calc(100vh - 64px - 48px)', border: 'none', display: 'block' }}
    />
  );
}
