// Chat playground (spec §2 Playground and Login ?expired=true, §4 playground message states, §5 Playground, §9
// playground defaults).
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import {
  Alert,
  App as AntApp,
  Avatar,
  Button,
  Card,
  Drawer,
  Flex,
  Grid,
  Input,
  InputNumber,
  Layout,
  Select,
  Slider,
  Space,
  Spin,
  Tag,
  Typography,
} from 'antd';
import {
  ClearOutlined,
  RobotOutlined,
  SendOutlined,
  SettingOutlined,
  StopOutlined,
  UserOutlined,
} from '@ant-design/icons';
import { apiFetch } from '../../lib/api.js';
import { selfGroupsQuery, selfModelsQuery } from '../../lib/self.js';
import { NS as AUTH_NS } from '../auth/i18n.js';
import { translateServerMessage } from '../../i18n/server-message.js';
import './i18n.js';
import { buildChatBody, streamChat, type ChatMessage } from './sse.js';

const DEFAULT_MODEL = 'gpt-4o-mini';
const DEFAULT_SYSTEM =
  'You are a helpful assistant. You can help me by answering my questions. You can also ask me questions.';

let seq = 0;
const newId = () => `m${Date.now().toString(36)}${(seq++).toString(36)}`;

export default function PlaygroundPage() {
  const { t } = useTranslation('playground');
  // The session-expired notice reuses the login page's text (auth namespace), so both stay identical.
  const [params] = useSearchParams();
  const expired = params.get('expired') === 'true';
  const { message } = AntApp.useApp();
  const greeting = useCallback(
    (): ChatMessage => ({ id: newId(), role: 'assistant', content: t('greeting'), status: 'complete' }),
    [t],
  );
  const [group, setGroup] = useState('');
  const [model, setModel] = useState(DEFAULT_MODEL);
  const [temperature, setTemperature] = useState(0);
  const [maxTokens, setMaxTokens] = useState(0);
  const [system, setSystem] = useState(DEFAULT_SYSTEM);
  const [messages, setMessages] = useState<ChatMessage[]>(() => [greeting()]);
  const [input, setInput] = useState('');
  const [collapsed, setCollapsed] = useState(false);
  // On a phone the settings open in a drawer from a button in the card's header: a zero-width sider's trigger would
  // sit on top of the title.
  const isMobile = Grid.useBreakpoint().md === false;
  const [settingsOpen, setSettingsOpen] = useState(false);
  const abortRef = useRef<AbortController | null>(null);
  const listRef = useRef<HTMLDivElement>(null);
  const busy = messages.some((m) => m.status === 'loading' || m.status === 'incomplete');

  const groupsData = useQuery(selfGroupsQuery).data;
  const groups = useMemo(
    () =>
      groupsData
        ? [
            { value: '', label: t('groupUser') },
            ...Object.entries(groupsData).map(([g, info]) => ({
              value: g,
              label: info?.desc ? `${g} - ${translateServerMessage(info.desc)}` : g,
            })),
          ]
        : [],
    [groupsData, t],
  );
  const modelsData = useQuery(selfModelsQuery).data;
  const models = useMemo(() => modelsData ?? [], [modelsData]);
  // the default model when the user may call it, else their first
  useEffect(() => {
    if (models.length && !models.includes(DEFAULT_MODEL)) setModel(models[0]!);
  }, [models]);

  useEffect(() => {
    listRef.current?.scrollTo({ top: listRef.current.scrollHeight });
  }, [messages]);

  const patchLast = (fn: (m: ChatMessage) => ChatMessage) =>
    setMessages((list) => {
      const copy = [...list];
      const last = copy[copy.length - 1];
      if (last && last.role === 'assistant') copy[copy.length - 1] = fn(last);
      return copy;
    });

  // One chat turn: the answer streams into the last message as it comes; a stop ends it as it stands.
  const chat = useMutation({
    mutationFn: async ({ body, controller }: { body: unknown; controller: AbortController }) => {
      const res = await apiFetch('/pg/chat/completions', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      await streamChat(res, (content, reasoning) =>
        patchLast((m) => ({
          ...m,
          content: m.content + content,
          reasoning: reasoning ? (m.reasoning ?? '') + reasoning : m.reasoning,
          status: 'incomplete',
        })),
      );
    },
    onSuccess: () => patchLast((m) => ({ ...m, status: 'complete' })),
    onError: (e, { controller }) => {
      if (controller.signal.aborted) return patchLast((m) => ({ ...m, status: 'complete' }));
      const msg = e instanceof Error ? e.message : String(e);
      patchLast((m) => ({ ...m, content: m.content ? `${m.content}\n\n${msg}` : msg, status: 'error' }));
    },
    onSettled: () => {
      abortRef.current = null;
    },
  });

  const send = async () => {
    const text = input.trim();
    if (!text || busy) return;
    const userMsg: ChatMessage = { id: newId(), role: 'user', content: text, status: 'complete' };
    const history = [...messages, userMsg];
    setMessages([...history, { id: newId(), role: 'assistant', content: '', status: 'loading' }]);
    setInput('');
    const controller = new AbortController();
    abortRef.current = controller;
    const body = buildChatBody({ system, history, model, group, temperature, maxTokens });
    // the failure is shown in the message (onError)
    await chat.mutateAsync({ body, controller }).catch(() => undefined);
  };

  const stop = () => abortRef.current?.abort();

  const clear = () => {
    stop();
    setMessages([greeting()]);
    message.success(t('cleared'));
  };

  const settings = (
    <Space
      orientation="vertical"
      style={{ width: '100%', padding: 16 }}
      size="middle"
      data-testid="playground-settings"
    >
      <Typography.Title level={5} style={{ margin: 0 }}>
        {t('settings')}
      </Typography.Title>
      <div>
        <Typography.Text>{t('group')}</Typography.Text>
        <Select
          style={{ width: '100%' }}
          value={group}
          onChange={setGroup}
          options={groups.length ? groups : [{ value: '', label: t('groupUser') }]}
        />
      </div>
      <div>
        <Typography.Text>{t('model')}</Typography.Text>
        <Select
          style={{ width: '100%' }}
          showSearch
          value={model}
          onChange={setModel}
          options={Array.from(new Set([model, ...models])).map((m) => ({ value: m, label: m }))}
          data-testid="playground-model"
        />
      </div>
      <div>
        <Typography.Text>{t('temperature', { value: temperature })}</Typography.Text>
        <Slider min={0.1} max={1} step={0.1} value={temperature} onChange={(v: number) => setTemperature(v)} />
      </div>
      <div>
        <Typography.Text>{t('maxTokens')}</Typography.Text>
        <InputNumber
          style={{ width: '100%' }}
          min={0}
          precision={0}
          value={maxTokens}
          onChange={(v) => setMaxTokens(Math.trunc(Number(v ?? 0)) || 0)}
        />
      </div>
      <div>
        <Typography.Text>{t('system')}</Typography.Text>
        <Input.TextArea
          autoSize={{ minRows: 4, maxRows: 12 }}
          value={system}
          onChange={(e) => setSystem(e.target.value)}
        />
      </div>
    </Space>
  );

  return (
    <Layout style={{ minHeight: 'calc(100vh - 180px)', background: 'transparent' }} data-testid="playground-page">
      {isMobile ? (
        <Drawer
          placement="left"
          size={300}
          open={settingsOpen}
          onClose={() => setSettingsOpen(false)}
          styles={{ body: { padding: 0 } }}
        >
          {settings}
        </Drawer>
      ) : (
        <Layout.Sider
          width={300}
          theme="light"
          breakpoint="md"
          collapsedWidth={0}
          collapsible
          collapsed={collapsed}
          onCollapse={setCollapsed}
          zeroWidthTriggerStyle={{ top: 12 }}
          style={{ borderRadius: 8, marginRight: collapsed ? 0 : 16 }}
        >
          {settings}
        </Layout.Sider>
      )}
      <Layout.Content>
        <Card
          title={t('title')}
          extra={
            <Flex gap={8}>
              {isMobile ? (
                <Button
                  icon={<SettingOutlined />}
                  aria-label={t('settings')}
                  onClick={() => setSettingsOpen(true)}
                  data-testid="playground-settings-toggle"
                />
              ) : null}
              <Button icon={<ClearOutlined />} onClick={clear} data-testid="playground-clear">
                {t('clear')}
              </Button>
            </Flex>
          }
          styles={{ body: { display: 'flex', flexDirection: 'column', gap: 12 } }}
        >
          {expired && (
            <Alert type="warning" showIcon title={t('expired', { ns: AUTH_NS })} data-testid="expired-notice" />
          )}
          <div
            ref={listRef}
            style={{ minHeight: 320, maxHeight: '60vh', overflowY: 'auto' }}
            data-testid="playground-messages"
          >
            {messages.map((m) => (
              <Flex
                key={m.id}
                gap={8}
                justify={m.role === 'user' ? 'flex-end' : 'flex-start'}
                style={{ marginBottom: 12 }}
                data-role={m.role}
                data-status={m.status}
              >
                {m.role !== 'user' && <Avatar icon={<RobotOutlined />} style={{ flex: 'none' }} />}
                <div
                  style={{
                    maxWidth: '80%',
                    padding: '8px 12px',
                    borderRadius: 8,
                    whiteSpace: 'pre-wrap',
                    wordBreak: 'break-word',
                    background: m.role === 'user' ? 'rgba(22,119,255,0.12)' : 'rgba(127,127,127,0.10)',
                    border: m.status === 'error' ? '1px solid #ff4d4f' : undefined,
                  }}
                  className="playground-message"
                >
                  {m.reasoning ? (
                    <Typography.Paragraph type="secondary" style={{ fontSize: 12 }}>
                      {m.reasoning}
                    </Typography.Paragraph>
                  ) : null}
                  {m.status === 'loading' ? <Spin size="small" /> : m.content}
                  {m.status === 'error' && (
                    <div>
                      <Tag color="red">{t('error')}</Tag>
                    </div>
                  )}
                </div>
                {m.role === 'user' && <Avatar icon={<UserOutlined />} style={{ flex: 'none' }} />}
              </Flex>
            ))}
          </div>
          <Flex gap={8} align="flex-end">
            <Input.TextArea
              autoSize={{ minRows: 1, maxRows: 6 }}
              value={input}
              onChange={(e) => setInput(e.target.value)}
              placeholder={t('inputPh')}
              onPressEnter={(e) => {
                if (!e.shiftKey) {
                  e.preventDefault();
                  void send();
                }
              }}
              data-testid="playground-input"
            />
            {busy ? (
              <Button key="stop" danger icon={<StopOutlined />} onClick={stop} data-testid="playground-stop">
                {t('stop')}
              </Button>
            ) : (
              <Button
                key="send"
                type="primary"
                icon={<SendOutlined />}
                onClick={() => void send()}
                data-testid="playground-send"
              >
                {t('send')}
              </Button>
            )}
          </Flex>
        </Card>
      </Layout.Content>
    </Layout>
  );
}
