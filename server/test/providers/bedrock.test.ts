// Bedrock plumbing: key parsing, model ids, URLs, bodies, errors, the event-stream decoder, and SigV4 signing judged
// by a mock that verifies signatures the way AWS does.
import { readFileSync } from 'node:fs';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toBedrockClaudeBody } from '../../src/relay/providers/bedrock/body.js';
import { BedrockKeyError, parseBedrockKey } from '../../src/relay/providers/bedrock/credentials.js';
import { bedrockTarget } from '../../src/relay/providers/bedrock/endpoint.js';
import { parseBedrockError } from '../../src/relay/providers/bedrock/errors.js';
import { bedrockModelId, regionGeography } from '../../src/relay/providers/bedrock/models.js';
import { signRequest } from '../../src/relay/providers/bedrock/sign.js';
import {
  BedrockEventDecoder,
  BedrockStreamError,
  encodeBedrockChunk,
  encodeBedrockException,
} from '../../src/relay/stream/aws-eventstream.js';
import { randomSplit } from '../formats/conformance.js';
import { MockBedrock } from '../helpers/mock-bedrock.js';

const AK = 'AKIAIOSFODNN7EXAMPLE';
const SK = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

describe('parseBedrockKey', () => {
  it('reads AK|SK|region and an optional session token', () => {
    expect(parseBedrockKey(`${AK}|${SK}|us-west-2`)).toEqual({
      accessKeyId: AK,
      secretAccessKey: SK,
      region: 'us-west-2',
    });
    expect(parseBedrockKey(` ${AK}|${SK}|eu-central-1|FwoGZXIvYXdzEJr `)).toEqual({
      accessKeyId: AK,
      secretAccessKey: SK,
      region: 'eu-central-1',
      sessionToken: 'FwoGZXIvYXdzEJr',
    });
  });

  it.each([
    ['sk-only', /AccessKeyId\|SecretAccessKey\|region/],
    [`${AK}|${SK}`, /got 2 parts/],
    [`${AK}|${SK}|us-east-1|tok|extra`, /got 5 parts/],
    [`|${SK}|us-east-1`, /access key id/],
    [`${AK}||us-east-1`, /secret access key/],
    [`${AK}|${SK}|`, /region \(third part\) is empty/],
    [`${AK}|${SK}|not a region`, /not an AWS region/],
    [`${AK}|${SK}|us-east-1|`, /session token/],
  ])('refuses %s', (key, message) => {
    expect(() => parseBedrockKey(key)).toThrow(BedrockKeyError);
    expect(() => parseBedrockKey(key)).toThrow(message);
  });

  it('never echoes the secret in its errors', () => {
    expect(() => parseBedrockKey(`${AK}|${SK}|bad region`)).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(SK) }),
    );
  });
});

describe('bedrockModelId', () => {
  it('maps Claude names to Bedrock ids', () => {
    const plain = (m: string) => bedrockModelId(m, 'sa-east-1');
    expect(plain('claude-3-haiku-20240307')).toBe('anthropic.claude-3-haiku-20240307-v1:0');
    expect(plain('claude-3-sonnet-20240229')).toBe('anthropic.claude-3-sonnet-20240229-v1:0');
    expect(plain('claude-3-opus-20240229')).toBe('anthropic.claude-3-opus-20240229-v1:0');
    expect(plain('claude-3-5-sonnet-20241022')).toBe('anthropic.claude-3-5-sonnet-20241022-v2:0');
    expect(plain('claude-3-5-haiku-20241022')).toBe('anthropic.claude-3-5-haiku-20241022-v1:0');
    expect(plain('claude-3-7-sonnet-20250219')).toBe('anthropic.claude-3-7-sonnet-20250219-v1:0');
    expect(plain('claude-sonnet-4-20250514')).toBe('anthropic.claude-sonnet-4-20250514-v1:0');
    expect(plain('claude-opus-4-20250514')).toBe('anthropic.claude-opus-4-20250514-v1:0');
    expect(plain('claude-opus-4-1-20250805')).toBe('anthropic.claude-opus-4-1-20250805-v1:0');
    expect(plain('claude-sonnet-4-5-20250929')).toBe('anthropic.claude-sonnet-4-5-20250929-v1:0');
    expect(plain('claude-haiku-4-5-20251001')).toBe('anthropic.claude-haiku-4-5-20251001-v1:0');
    expect(plain('claude-opus-4-5-20251101')).toBe('anthropic.claude-opus-4-5-20251101-v1:0');
  });

  it('adds the inference profile of the region geography when the model has one', () => {
    expect(bedrockModelId('claude-sonnet-4-20250514', 'us-east-1')).toBe('us.anthropic.claude-sonnet-4-20250514-v1:0');
    expect(bedrockModelId('claude-sonnet-4-20250514', 'eu-central-1')).toBe(
      'eu.anthropic.claude-sonnet-4-20250514-v1:0',
    );
    expect(bedrockModelId('claude-sonnet-4-20250514', 'ap-northeast-1')).toBe(
      'apac.anthropic.claude-sonnet-4-20250514-v1:0',
    );
    // Opus 4 has a US profile only; 3.5 Sonnet v2 none in Europe
    expect(bedrockModelId('claude-opus-4-20250514', 'eu-west-1')).toBe('anthropic.claude-opus-4-20250514-v1:0');
    expect(bedrockModelId('claude-3-5-sonnet-20241022', 'eu-west-1')).toBe('anthropic.claude-3-5-sonnet-20241022-v2:0');
    expect(bedrockModelId('claude-3-5-sonnet-20241022', 'ap-southeast-2')).toBe(
      'apac.anthropic.claude-3-5-sonnet-20241022-v2:0',
    );
    // GovCloud and other geographies have none of these profiles
    expect(bedrockModelId('claude-3-haiku-20240307', 'us-gov-west-1')).toBe('anthropic.claude-3-haiku-20240307-v1:0');
    expect(regionGeography('ca-central-1')).toBeNull();
  });

  it('passes ids already in Bedrock form through', () => {
    expect(bedrockModelId('anthropic.claude-3-haiku-20240307-v1:0', 'us-east-1')).toBe(
      'anthropic.claude-3-haiku-20240307-v1:0',
    );
    expect(bedrockModelId('eu.anthropic.claude-sonnet-4-20250514-v1:0', 'us-east-1')).toBe(
      'eu.anthropic.claude-sonnet-4-20250514-v1:0',
    );
  });
});

describe('bedrockTarget and toBedrockClaudeBody', () => {
  it('builds the regional URL with the id percent-encoded', () => {
    const modelId = 'us.anthropic.claude-3-5-haiku-20241022-v1:0';
    expect(bedrockTarget({ region: 'us-east-1', modelId, stream: false })).toEqual({
      origin: 'https://bedrock-runtime.us-east-1.amazonaws.com',
      path: '/model/us.anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke',
    });
    expect(bedrockTarget({ region: 'us-east-1', modelId, stream: true }).path).toBe(
      '/model/us.anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke-with-response-stream',
    );
    expect(bedrockTarget({ region: 'us-east-1', modelId, stream: false, baseUrl: 'http://127.0.0.1:9999/' })).toEqual({
      origin: 'http://127.0.0.1:9999',
      path: '/model/us.anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke',
    });
    expect(bedrockTarget({ region: 'eu-west-1', modelId, stream: false, baseUrl: '' }).origin).toBe(
      'https://bedrock-runtime.eu-west-1.amazonaws.com',
    );
  });

  it('drops model and stream and sets the Bedrock API version, keeping anthropic_beta', () => {
    expect(
      toBedrockClaudeBody({
        model: 'claude-sonnet-4-20250514',
        stream: true,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi' }],
        anthropic_beta: ['context-1m-2025-08-07'],
      }),
    ).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
      anthropic_beta: ['context-1m-2025-08-07'],
    });
  });
});

describe('parseBedrockError', () => {
  it('takes the type from x-amzn-errortype and the message from the body', () => {
    const body = Buffer.from('{"message":"Malformed input request: #: extraneous key [model] is not permitted"}');
    expect(
      parseBedrockError(
        400,
        { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
        body,
      ),
    ).toEqual({
      message: 'Malformed input request: #: extraneous key [model] is not permitted',
      type: 'ValidationException',
      code: 'ValidationException',
    });
    expect(
      parseBedrockError(429, { 'X-Amzn-ErrorType': 'ThrottlingException' }, '{"Message":"Too many requests"}'),
    ).toEqual({
      message: 'Too many requests',
      type: 'ThrottlingException',
      code: 'ThrottlingException',
    });
    const h = new Headers({ 'x-amzn-errortype': 'AccessDeniedException:http://internal.amazon.com/coral/' });
    expect(parseBedrockError(403, h, '{"message":"You don\'t have access to the model"}').type).toBe(
      'AccessDeniedException',
    );
  });

  it('survives a body that is not JSON and a missing header', () => {
    expect(parseBedrockError(503, {}, '<html>Service Unavailable</html>')).toEqual({
      message: '<html>Service Unavailable</html>',
      type: 'bedrock_error',
      code: '503',
    });
    expect(parseBedrockError(429, {}, '{"__type":"com.amazon.coral#ThrottlingException","message":"slow"}').type).toBe(
      'ThrottlingException',
    );
  });
});

describe('BedrockEventDecoder', () => {
  const events = [
    { type: 'message_start', message: { id: 'msg_bdrk_01', usage: { input_tokens: 5, output_tokens: 1 } } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'héllo wörld ✓' } },
    { type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 5, outputTokenCount: 3 } },
  ];
  // a recorded invoke-with-response-stream answer (random splits of it: provider-conformance.test.ts)
  const recorded = readFileSync(new URL('../../src/relay/providers/bedrock/__fixtures__/stream.bin', import.meta.url));

  it('cuts recorded frames fed byte by byte into the Claude events they carry, padding dropped', () => {
    const whole = new BedrockEventDecoder().push(recorded);
    expect(whole.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(whole.every((e) => !('p' in JSON.parse(e.data)))).toBe(true);
    const decoder = new BedrockEventDecoder();
    const got = [...recorded].flatMap((b) => decoder.push(Uint8Array.of(b)));
    expect(got).toEqual(whole);
    expect(decoder.leftover).toBe(0);
  });

  it('reads what its own encoder writes (the frames of the mock upstream)', () => {
    const bytes = Buffer.concat(events.map((e, i) => encodeBedrockChunk(e, 'x'.repeat(i * 7 + 1))));
    expect(new BedrockEventDecoder().push(bytes)).toEqual(
      events.map((e) => ({ data: JSON.stringify(e), event: e.type })),
    );
  });

  it('throws on an exception frame, with its type and message', () => {
    const decoder = new BedrockEventDecoder();
    const stream = Buffer.concat([
      encodeBedrockChunk(events[0]),
      encodeBedrockException('throttlingException', 'Too many tokens'),
    ]);
    expect(decoder.push(stream.subarray(0, 10))).toEqual([]);
    let caught: unknown;
    try {
      decoder.push(stream.subarray(10));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(BedrockStreamError);
    expect(caught).toMatchObject({
      exceptionType: 'throttlingException',
      message: 'throttlingException: Too many tokens',
    });
  });

  it('refuses bytes that are not event-stream framing, and a corrupted message', () => {
    expect(() => new BedrockEventDecoder().push(Buffer.from('{"message":"not a stream"}'))).toThrow(/event stream/);
    const corrupt = Buffer.from(recorded);
    corrupt[corrupt.length - 10] ^= 0xff;
    expect(() => new BedrockEventDecoder().push(corrupt)).toThrow();
  });
});

describe('signRequest against a SigV4-checking Bedrock mock', () => {
  let mock: MockBedrock;
  const creds = { accessKeyId: AK, secretAccessKey: SK, region: 'us-east-1' };
  const modelId = 'us.anthropic.claude-sonnet-4-20250514-v1:0';
  const bodyOf = (extra: Record<string, unknown> = {}) =>
    Buffer.from(
      JSON.stringify(
        toBedrockClaudeBody({ model: 'x', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }], ...extra }),
      ),
    );

  beforeAll(async () => {
    mock = await MockBedrock.start({ accessKeyId: AK, secretAccessKey: SK, region: 'us-east-1' });
  });
  afterAll(() => mock.close());

  async function send(opts: {
    stream?: boolean;
    creds?: typeof creds & { sessionToken?: string };
    body?: Buffer;
    sentBody?: Buffer;
    sentPath?: string;
    date?: Date;
  }) {
    const body = opts.body ?? bodyOf();
    const target = bedrockTarget({ region: 'us-east-1', modelId, stream: !!opts.stream, baseUrl: mock.url });
    const headers = await signRequest(
      opts.creds ?? creds,
      {
        method: 'POST',
        url: target.origin + target.path,
        headers: { 'Content-Type': 'application/json', accept: '*/*' },
        body,
      },
      opts.date,
    );
    const { host: _host, ...sendable } = headers;
    return fetch(mock.url + (opts.sentPath ?? target.path), {
      method: 'POST',
      headers: sendable,
      body: opts.sentBody ?? body,
    });
  }

  it('is accepted, and answers a Claude message from Bedrock', async () => {
    const res = await send({});
    expect(res.status).toBe(200);
    const json: any = await res.json();
    expect(json).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-20250514',
      stop_reason: 'end_turn',
    });
    expect(json.id).toMatch(/^msg_bdrk_/);
    const last = mock.requests[mock.requests.length - 1];
    expect(last.modelId).toBe(modelId);
    expect(last.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/us-east-1\/bedrock\/aws4_request/,
    );
    expect(last.headers['x-amz-content-sha256']).toMatch(/^[0-9a-f]{64}$/);
  });

  it('carries a session token, signed', async () => {
    const res = await send({ creds: { ...creds, sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE' } });
    expect(res.status).toBe(200);
    const last = mock.requests[mock.requests.length - 1];
    expect(last.headers['x-amz-security-token']).toBe('IQoJb3JpZ2luX2VjEXAMPLE');
    expect(last.headers.authorization).toContain('x-amz-security-token');
  });

  it('streams event-stream frames that decode to the Claude events, metrics in the last', async () => {
    mock.answer = () => ({ kind: 'tool_use', name: 'get_weather', input: { city: 'Paris' }, text: 'Let me check.' });
    try {
      const res = await send({ stream: true });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
      const decoder = new BedrockEventDecoder();
      const events = randomSplit(Buffer.from(await res.arrayBuffer()), 3, 40).flatMap((p) => decoder.push(p));
      const types = events.map((e) => e.event);
      expect(types[0]).toBe('message_start');
      expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
      expect(types.filter((t) => t === 'content_block_start')).toHaveLength(2);
      const stop = JSON.parse(events[events.length - 1].data);
      expect(stop['amazon-bedrock-invocationMetrics']).toMatchObject({ inputTokenCount: 12, outputTokenCount: 6 });
      const args = events
        .map((e) => JSON.parse(e.data))
        .filter((e) => e.delta?.type === 'input_json_delta')
        .map((e) => e.delta.partial_json)
        .join('');
      expect(JSON.parse(args)).toEqual({ city: 'Paris' });
    } finally {
      mock.answer = () => ({ kind: 'text', text: 'Hello from Bedrock!' });
    }
  });

  it('refuses a tampered body, a wrong secret, another path, a stale date and an unknown key as AWS does', async () => {
    const expectRefusal = async (res: Response, status: number, type: string, message: RegExp) => {
      expect(res.status).toBe(status);
      expect(res.headers.get('x-amzn-errortype')?.split(':')[0]).toBe(type);
      const body = await res.text();
      expect(parseBedrockError(res.status, res.headers, body)).toMatchObject({
        type,
        message: expect.stringMatching(message),
      });
    };
    await expectRefusal(
      await send({ sentBody: bodyOf({ max_tokens: 4096 }) }),
      403,
      'InvalidSignatureException',
      /signature we calculated does not match/,
    );
    await expectRefusal(
      await send({ creds: { ...creds, secretAccessKey: 'not-the-secret' } }),
      403,
      'InvalidSignatureException',
      /signature we calculated does not match/,
    );
    await expectRefusal(
      await send({ sentPath: '/model/us.anthropic.claude-opus-4-20250514-v1%3A0/invoke' }),
      403,
      'InvalidSignatureException',
      /signature we calculated does not match/,
    );
    await expectRefusal(
      await send({ date: new Date(Date.now() - 6 * 60_000) }),
      403,
      'InvalidSignatureException',
      /^Signature expired: \d{8}T\d{6}Z is now earlier than/,
    );
    await expectRefusal(
      await send({ creds: { ...creds, accessKeyId: 'AKIAUNKNOWN000000000' } }),
      403,
      'UnrecognizedClientException',
      /security token included in the request is invalid/,
    );
  });

  it('verifies a signature made without the x-amz-content-sha256 header (the body hash is still signed)', async () => {
    const body = bodyOf();
    const target = bedrockTarget({ region: 'us-east-1', modelId, stream: false, baseUrl: mock.url });
    const url = new URL(target.origin + target.path);
    const signer = new SignatureV4({
      credentials: creds,
      region: 'us-east-1',
      service: 'bedrock',
      sha256: Sha256,
      applyChecksum: false,
    });
    const signed = await signer.sign({
      method: 'POST',
      protocol: 'http:',
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      headers: { host: url.host, 'content-type': 'application/json' },
      body,
    });
    const { host: _host, ...headers } = signed.headers;
    expect(headers['x-amz-content-sha256']).toBeUndefined();
    expect((await fetch(url, { method: 'POST', headers, body })).status).toBe(200);
    const tampered = await fetch(url, { method: 'POST', headers, body: bodyOf({ temperature: 1 }) });
    expect(tampered.status).toBe(403);
  });

  it('validates the body as Bedrock does', async () => {
    const raw = (o: Record<string, unknown>) => Buffer.from(JSON.stringify(o));
    const base = {
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'x' }],
    };
    const cases: [Buffer, RegExp][] = [
      [raw({ ...base, model: 'claude' }), /extraneous key \[model\]/],
      [raw({ ...base, stream: true }), /extraneous key \[stream\]/],
      [raw({ ...base, anthropic_version: 'vertex-2023-10-16' }), /Invalid API version/],
      [raw({ anthropic_version: 'bedrock-2023-05-31', messages: base.messages }), /required key \[max_tokens\]/],
      [raw({ ...base, messages: [] }), /at least one message/],
    ];
    for (const [body, message] of cases) {
      const res = await send({ body });
      expect(res.status).toBe(400);
      const err = parseBedrockError(res.status, res.headers, await res.text());
      expect(err.type).toBe('ValidationException');
      expect(err.message).toMatch(message);
    }
  });

  it('lets a test script an error or a mid-stream exception', async () => {
    mock.answer = () => ({
      kind: 'error',
      status: 429,
      type: 'ThrottlingException',
      message: 'Too many requests, please wait before trying again.',
    });
    try {
      const res = await send({});
      expect(res.status).toBe(429);
      expect(parseBedrockError(429, res.headers, await res.text()).type).toBe('ThrottlingException');
      mock.answer = () => ({
        kind: 'stream-exception',
        type: 'modelStreamErrorException',
        message: 'boom',
        afterEvents: 3,
      });
      const stream = await send({ stream: true });
      const decoder = new BedrockEventDecoder();
      const bytes = Buffer.from(await stream.arrayBuffer());
      expect(() => decoder.push(bytes)).toThrow(/modelStreamErrorException: boom/);
    } finally {
      mock.answer = () => ({ kind: 'text', text: 'Hello from Bedrock!' });
    }
  });
});
