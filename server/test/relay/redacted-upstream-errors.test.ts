// An upstream that echoes the request's credentials in its error (a misbehaving proxy, a hostile base URL) hands
// nothing on: the channel's key in every form (raw, Bearer, base64, the pieces of a composite key) and the secrets
// derived from it (Vertex AI's signed grant and access token, Bedrock's SigV4 signature and session token) are
// "[redacted]" in the client's error, the log lines, the channel's automatic-disable reason and the console's channel
// test. One echo server plays every upstream (and Vertex AI's token endpoint): it answers each request with a 401
// whose message quotes the URL, the headers and the body it received.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { capturedLogger } from '../helpers/captured-log.js';
import { makeServiceAccount } from '../helpers/mock-vertex.js';
import { addChannel, addToken, addUser, channelsChanged, relayPost, setOptions, waitFor } from './fixtures.js';
import { channelRedactor } from '../../src/relay/redact.js';
import { REDACTED } from '../../src/lib/redact.js';

interface Echoed {
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Answers every request with a 401 quoting it; the token endpoint grants a token unless the account is "refused". */
async function echoServer() {
  const seen: Echoed[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const echoed: Echoed = { url: req.url ?? '', headers: req.headers, body: Buffer.concat(parts).toString('utf8') };
      seen.push(echoed);
      const quote = `you sent ${JSON.stringify(echoed)}`;
      res.setHeader('content-type', 'application/json');
      if (req.url === '/token') {
        const assertion = new URLSearchParams(echoed.body).get('assertion') ?? '';
        const claims = JSON.parse(Buffer.from(assertion.split('.')[1] ?? '', 'base64url').toString('utf8') || '{}');
        if (!String(claims.iss).startsWith('refused')) {
          res.end(JSON.stringify({ access_token: `ya29.access-${claims.iss}-0123456789`, expires_in: 3600 }));
          return;
        }
        res.statusCode = 400;
        res.end(JSON.stringify({ error: 'invalid_grant', error_description: quote }));
        return;
      }
      if (req.url === '/v1/user/info') {
        // SiliconFlow's balance endpoint: a refusal is a 200 with its own code and message
        res.end(JSON.stringify({ code: 401, message: quote }));
        return;
      }
      res.statusCode = 401;
      res.setHeader('x-amzn-errortype', 'UnrecognizedClientException');
      // one body every vendor's parser reads its message from: OpenAI's and Google's `error.message`, Anthropic's
      // `error.message` under `type: error`, Bedrock's top-level `message`
      const error = { type: 'authentication_error', message: quote, code: 401, status: 'UNAUTHENTICATED' };
      res.end(JSON.stringify({ type: 'error', error, message: quote }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((r) => server.close(r)),
  };
}

/** Every credential the echo server was sent: header values, their token parts, a `key` parameter, a grant. */
function credentialsIn(requests: Echoed[]): string[] {
  const out: string[] = [];
  for (const r of requests) {
    for (const name of ['authorization', 'x-api-key', 'x-goog-api-key', 'api-key', 'x-amz-security-token']) {
      const v = r.headers[name];
      if (typeof v !== 'string') continue;
      out.push(v);
      const bearer = /^Bearer (.+)$/.exec(v);
      if (bearer) out.push(bearer[1]);
      const sig = /Signature=([0-9a-f]+)/.exec(v);
      if (sig) out.push(sig[1]);
    }
    const key = new URL(r.url, 'http://x').searchParams.get('key');
    if (key) out.push(key);
    const assertion = new URLSearchParams(r.body).get('assertion');
    if (assertion) out.push(assertion, assertion.split('.')[2]);
  }
  return out;
}

const BEDROCK_KEY =
  'AKIAREDACTTEST000001|wJalrXUtnFEMI/K7MDENG+bPxRfiCYREDACT01|us-east-1|FwoGZXIvYXdzEBsessiontoken0001';

const CHANNELS = [
  { name: 'OpenAI-compatible', type: 1, model: 'redact-gpt', key: 'sk-openai-channel-secret-0001' },
  { name: 'Anthropic', type: 14, model: 'claude-3-5-sonnet-20241022', key: 'sk-ant-api03-channel-secret-0002' },
  { name: 'Gemini', type: 24, model: 'gemini-2.5-flash', key: 'AIzaSyGeminiChannelSecret0003' },
  { name: 'Bedrock', type: 33, model: 'claude-3-haiku-20240307', key: BEDROCK_KEY },
  { name: 'Vertex AI', type: 41, model: 'gemini-2.5-pro', key: '' },
  { name: 'Vertex AI, grant refused', type: 41, model: 'gemini-2.0-flash', key: '' },
] as const;

/** The secret pieces of a channel's key that must never show. */
function keyPieces(key: string): string[] {
  if (key.startsWith('{')) {
    const sa = JSON.parse(key);
    const pem = sa.private_key as string;
    return [sa.private_key_id, pem, ...pem.split('\n').filter((l) => l && !l.startsWith('-----'))];
  }
  const pieces = key.split('|').filter((p) => !/^us-/.test(p));
  return [key, ...pieces, Buffer.from(key).toString('base64').replace(/=+$/, '')];
}

describe('upstream errors keep no channel secret', () => {
  let s: TestServer;
  let echo: Awaited<ReturnType<typeof echoServer>>;
  const log = capturedLogger();
  const ids = new Map<string, number>();
  const keys = new Map<string, string>();
  let userKey: string;
  let admin: Record<string, string>;

  beforeAll(async () => {
    echo = await echoServer();
    s = await startTestServer({ env: { VERTEX_TOKEN_URL: `${echo.url}/token` }, logger: log.logger });
    await setOptions(s, {
      ModelRatio: Object.fromEntries(CHANNELS.map((c) => [c.model, 1])),
      AutomaticDisableChannelEnabled: 'true',
    });
    for (const c of CHANNELS) {
      const key =
        c.type === 41
          ? makeServiceAccount(`${echo.url}/token`, { name: c.name.includes('refused') ? 'refused' : 'granted' })
          : c.key;
      keys.set(c.name, key);
      ids.set(
        c.name,
        await addChannel(s, {
          type: c.type,
          key,
          baseUrl: echo.url,
          models: [c.model],
          other: c.type === 41 ? 'us-central1' : '',
        }),
      );
    }
    await channelsChanged(s);
    const u = await addUser(s, { quota: 10_000_000 });
    userKey = (await addToken(s, u.id)).key;
    const root = await addUser(s, { role: 100, username: 'rootredact' });
    await s.ctx.db.updateTable('users').set({ access_token: 'redact-admin-token' }).where('id', '=', root.id).execute();
    admin = { authorization: 'redact-admin-token', 'new-api-user': String(root.id) };
  });
  afterAll(async () => {
    await s?.close();
    await echo?.close();
  });

  /** Fails naming the secret a text shows. */
  const expectNoSecret = (text: string, secrets: string[]) => {
    for (const secret of secrets) expect(text, `shows ${secret.slice(0, 12)}…`).not.toContain(secret);
  };

  for (const c of CHANNELS) {
    it(`hides the ${c.name} channel's secrets from the client, the logs, the disable reason and the channel test`, async () => {
      const key = keys.get(c.name)!;
      const id = ids.get(c.name)!;
      const before = echo.seen.length;
      const res = await relayPost(s, '/v1/chat/completions', userKey, {
        model: c.model,
        max_tokens: 20,
        messages: [{ role: 'user', content: 'hi' }],
      });
      const answer = await res.text();
      expect(res.status).not.toBe(200);
      // the echo reached the client, hidden
      expect(JSON.parse(answer).error.message).toContain(REDACTED);

      const test = (await (await fetch(`${s.url}/api/channel/test/${id}`, { headers: admin })).json()) as {
        success: boolean;
        message: string;
      };
      expect(test.success).toBe(false);
      expect(test.message).toContain(REDACTED);

      const secrets = [...keyPieces(key), ...credentialsIn(echo.seen.slice(before))];
      expect(secrets.length).toBeGreaterThan(2);
      expectNoSecret(answer, secrets);
      expectNoSecret(test.message, secrets);
      // a 401 disables the channel (the refused grant is not the upstream's answer: that channel stays)
      if (!c.name.includes('refused')) {
        await waitFor(async () => {
          const row = await s.ctx.db.selectFrom('channels').select('status').where('id', '=', id).executeTakeFirst();
          return row?.status === 3;
        });
        const row = await s.ctx.db
          .selectFrom('channels')
          .select('other_info')
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        const reason = JSON.parse(row.other_info ?? '{}').status_reason as string;
        expect(reason).toContain(REDACTED);
        expectNoSecret(reason, secrets);
      }
      expectNoSecret(JSON.stringify(log.lines), secrets);
    });
  }
});

describe('balance probes keep no channel secret', () => {
  it("hides the key an upstream's balance refusal quotes, in the console's answer", async () => {
    const echo = await echoServer();
    const s = await startTestServer();
    try {
      const key = 'sk-siliconflow-channel-secret-0004';
      const id = await addChannel(s, { type: 40, key, baseUrl: echo.url, models: ['balance-m'] });
      await channelsChanged(s);
      const root = await addUser(s, { role: 100, username: 'rootbalance' });
      await s.ctx.db
        .updateTable('users')
        .set({ access_token: 'balance-admin-token' })
        .where('id', '=', root.id)
        .execute();
      const admin = { authorization: 'balance-admin-token', 'new-api-user': String(root.id) };
      const r = (await (await fetch(`${s.url}/api/channel/update_balance/${id}`, { headers: admin })).json()) as {
        success: boolean;
        message: string;
      };
      expect(r.success).toBe(false);
      expect(r.message).toContain(REDACTED);
      expect(r.message).not.toContain(key);
      expect(echo.seen.at(-1)?.headers.authorization).toBe(`Bearer ${key}`);
    } finally {
      await s.close();
      await echo.close();
    }
  });
});

describe('channelRedactor', () => {
  it('hides a key raw, as Bearer, in base64, base64url and percent-encoded, and the pieces of a composite key', () => {
    const redact = channelRedactor('id-0123456789|secret/with+chars==|us-east-1');
    const text = [
      'id-0123456789',
      'secret/with+chars==',
      encodeURIComponent('secret/with+chars=='),
      Buffer.from('id-0123456789:secret/with+chars==').toString('base64'),
      Buffer.from('id-0123456789|secret/with+chars==|us-east-1').toString('base64url'),
      'secret\\/with+chars==',
    ].join(' ');
    expect(redact(text)).toBe(Array(6).fill(REDACTED).join(' '));
    // the region is no secret, and error texts name it
    expect(redact('not available in us-east-1')).toBe('not available in us-east-1');
  });

  it('hides what the adaptor sent: Bearer tokens, a SigV4 signature, a key parameter, any JWT', () => {
    const redact = channelRedactor('{"private_key_id":"abcdef0123456789"}', {
      headers: {
        authorization: 'AWS4-HMAC-SHA256 Credential=AK/x, SignedHeaders=host, Signature=0a1b2c3d4e5f60718293',
        'x-goog-api-key': 'google-key-12345',
      },
      path: '/v1/models/m:generateContent?key=query-key-123',
    });
    expect(redact('sig 0a1b2c3d4e5f60718293 g google-key-12345 q query-key-123 id abcdef0123456789')).toBe(
      `sig ${REDACTED} g ${REDACTED} q ${REDACTED} id ${REDACTED}`,
    );
    expect(redact('grant eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJ4In0.c2lnbmF0dXJl end')).toBe(`grant ${REDACTED} end`);
  });
});
