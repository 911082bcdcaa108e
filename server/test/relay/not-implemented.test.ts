// OpenAI paths the gateway does not relay answer 501 in the OpenAI error shape, whatever the body (new-api-compat.md
// §4.1).
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addToken, addUser, client } from './fixtures.js';

describe('unimplemented OpenAI endpoints', () => {
  let s: TestServer;
  let openai: OpenAI;
  beforeAll(async () => {
    s = await startTestServer();
    const user = await addUser(s, { quota: 1_000_000 });
    const { key } = await addToken(s, user.id);
    openai = client(s, key);
  });
  afterAll(async () => {
    await s?.close();
  });

  it('answers a multipart file upload from the official client with 501, not 415', async () => {
    const err = await openai.files
      .create({ file: await toFile(Buffer.from('{"a":1}\n'), 'data.jsonl'), purpose: 'fine-tune' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(501);
    expect((err as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      type: 'new_api_error',
      code: 'api_not_implemented',
    });
  });

  it('answers the other unrelayed paths with 501 too', async () => {
    for (const [method, path] of [
      ['GET', '/v1/files'],
      ['GET', '/v1/files/file-1/content'],
      ['POST', '/v1/fine-tunes'],
      ['DELETE', '/v1/models/gpt-4o'],
    ] as const) {
      const res = await fetch(s.url + path, {
        method,
        headers: { 'content-type': 'application/json' },
        body: method === 'POST' ? '{"x":1}' : undefined,
      });
      expect(res.status, `${method} ${path}`).toBe(501);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
        /^API not implemented \(request id: /,
      );
    }
  });
});
