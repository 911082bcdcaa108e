// The prompt's sensitive-word check (new-api-compat.md §4.6 step 3): on by default with new-api's word,
// case-insensitive, for chat (string and text-part contents), completions, embeddings and moderations; a hit is a local
// 400 that reaches no upstream and charges nothing; off when either option is off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  flushLogs,
  logsOf,
  relayPost,
  setOptions,
  userRow,
} from './fixtures.js';
import { findSensitiveWord, messageTexts } from '../../src/services/sensitive-words.js';

describe('sensitive-word check', () => {
  let s: TestServer;
  let up: MockUpstream;
  let channelId: number;

  beforeAll(async () => {
    s = await startTestServer();
    up = await MockUpstream.start();
    await setOptions(s, { ModelRatio: { 'sw-chat': 1, 'sw-embed': 1, 'sw-instruct': 1, 'text-moderation-stable': 1 } });
    channelId = await addChannel(s, {
      baseUrl: up.url,
      models: ['sw-chat', 'sw-embed', 'sw-instruct', 'text-moderation-stable'],
    });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  it('matches configured words case-insensitively, literally, in string and text-part contents', () => {
    const words = 'test_sensitive\n a.b \n\n';
    expect(findSensitiveWord(words, messageTexts([{ role: 'user', content: 'say TEST_Sensitive now' }]))).toBe(
      'TEST_Sensitive',
    );
    expect(
      findSensitiveWord(
        words,
        messageTexts([
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: 'x' } },
              { type: 'text', text: 'x a.b y' },
            ],
          },
        ]),
      ),
    ).toBe('a.b');
    // the dot is literal, not "any character"
    expect(findSensitiveWord(words, messageTexts([{ role: 'user', content: 'aXb' }]))).toBeNull();
    expect(findSensitiveWord('', messageTexts([{ role: 'user', content: 'test_sensitive' }]))).toBeNull();
  });

  it('refuses a prompt with a sensitive word on every checked endpoint: 400, no upstream call, nothing charged', async () => {
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id);
    up.reset();
    const cases: Array<[string, unknown]> = [
      [
        '/v1/chat/completions',
        {
          model: 'sw-chat',
          messages: [
            { role: 'system', content: 'fine' },
            { role: 'user', content: 'this is a Test_Sensitive prompt' },
          ],
        },
      ],
      [
        '/v1/chat/completions',
        {
          model: 'sw-chat',
          stream: true,
          messages: [{ role: 'user', content: [{ type: 'text', text: 'test_sensitive' }] }],
        },
      ],
      ['/v1/completions', { model: 'sw-instruct', prompt: ['ok', 'and test_sensitive'] }],
      ['/v1/embeddings', { model: 'sw-embed', input: 'test_sensitive' }],
      ['/v1/moderations', { input: ['test_sensitive'] }],
    ];
    for (const [path, body] of cases) {
      const r = await relayPost(s, path, t.key, body);
      expect(r.status, path).toBe(400);
      const j = (await r.json()) as any;
      expect(j.error).toMatchObject({ type: 'new_api_error', code: 'sensitive_words_detected' });
      expect(j.error.message).toMatch(/^sensitive words detected \(request id: /);
    }
    // an admin's request pinned to a channel (sk-<key>-<channel>) is checked too
    const admin = await addUser(s, { role: 100, quota: 1_000_000 });
    const pinned = await relayPost(
      s,
      '/v1/chat/completions',
      `${(await addToken(s, admin.id)).key}-${channelId}`,
      cases[0][1],
    );
    expect(pinned.status).toBe(400);
    expect(((await pinned.json()) as any).error.code).toBe('sensitive_words_detected');
    expect(up.requests).toHaveLength(0);
    await flushLogs(s);
    expect(await logsOf(s, u.id)).toHaveLength(0);
    expect((await userRow(s, u.id)).quota).toBe(1_000_000);
  });

  it('lets the same prompt through when either option is off, and checks the configured words', async () => {
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id);
    const body = { model: 'sw-chat', messages: [{ role: 'user', content: 'test_sensitive and forbidden-thing' }] };
    await setOptions(s, { CheckSensitiveOnPromptEnabled: 'false' });
    expect((await relayPost(s, '/v1/chat/completions', t.key, body)).status).toBe(200);
    await setOptions(s, { CheckSensitiveOnPromptEnabled: 'true', CheckSensitiveEnabled: 'false' });
    expect((await relayPost(s, '/v1/chat/completions', t.key, body)).status).toBe(200);
    await setOptions(s, { CheckSensitiveEnabled: 'true', SensitiveWords: 'forbidden-thing' });
    expect((await relayPost(s, '/v1/chat/completions', t.key, body)).status).toBe(400);
    expect(
      (
        await relayPost(s, '/v1/chat/completions', t.key, {
          ...body,
          messages: [{ role: 'user', content: 'test_sensitive only' }],
        })
      ).status,
    ).toBe(200);
    await setOptions(s, { SensitiveWords: 'test_sensitive' });
  });
});
