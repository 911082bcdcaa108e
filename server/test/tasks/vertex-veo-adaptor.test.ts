// Veo on Vertex AI's reading of the upstream's words: operation names taken apart only when they are plain Vertex
// paths (they become a URL), answers that are not this operation asked again, the bytes of a video never kept.
import { describe, expect, it } from 'vitest';
import {
  parseVertexOperation,
  readVertexVeoFetch,
  readVertexVeoSubmit,
} from '../../src/relay/providers/vertex-veo/adaptor.js';
import { vertexVeoTask } from '../../src/relay/providers/vertex-veo/index.js';
import type { ProviderSettings } from '../../src/relay/providers/types.js';
import { makeServiceAccount } from '../helpers/mock-vertex.js';

const NAME = 'projects/p-1/locations/us-central1/publishers/google/models/veo-3.0-generate-001/operations/abc-123';

describe('vertex veo adaptor', () => {
  it('takes apart a plain operation name only', () => {
    expect(parseVertexOperation(NAME)).toEqual({
      project: 'p-1',
      region: 'us-central1',
      model: 'veo-3.0-generate-001',
      name: NAME,
    });
    for (const bad of [
      NAME.replace('us-central1', 'evil.example.com#'),
      NAME.replace('us-central1', '..'),
      NAME.replace('p-1', '..'),
      NAME.replace('/publishers/google/', '/publishers/anthropic/'),
      `${NAME}/more`,
      'models/veo-3.0-generate-001/operations/abc',
    ])
      expect([bad, parseVertexOperation(bad)]).toEqual([bad, null]);
    expect(readVertexVeoSubmit(200, { name: NAME })).toBe(NAME);
    expect(readVertexVeoSubmit(200, { name: '../x' })).toBeNull();
    expect(readVertexVeoSubmit(403, { name: NAME })).toBeNull();
  });

  it('asks again on a failed call or another operation; keeps a video’s size, not its bytes', () => {
    expect(readVertexVeoFetch(429, { error: { code: 429, message: 'slow down' } }, NAME)).toBeNull();
    expect(readVertexVeoFetch(200, { name: `${NAME}x`, done: true }, NAME)).toBeNull();
    expect(readVertexVeoFetch(200, 'not an operation', NAME)).toBeNull();
    expect(readVertexVeoFetch(200, { name: NAME }, NAME)).toMatchObject([{ status: 'IN_PROGRESS' }]);
    const [done] = readVertexVeoFetch(
      200,
      { name: NAME, done: true, response: { videos: [{ bytesBase64Encoded: 'AAECAw==', mimeType: 'video/mp4' }] } },
      NAME,
    )!;
    expect(done).toMatchObject({ status: 'SUCCESS', failReason: '' });
    expect(done.data).toEqual({
      name: NAME,
      done: true,
      response: { videos: [{ mimeType: 'video/mp4', byteSize: 4 }] },
    });
  });

  it("without a base URL, calls the region's host, global's without a prefix, with the cached token", async () => {
    const key = makeServiceAccount('https://oauth2.googleapis.com/token', { project: 'p-1' });
    const asked: string[] = [];
    const settings = {
      credentials: {
        get: async (credential: { id: string }, k: string) => (asked.push(`${credential.id}:${k === key}`), 'tok'),
        invalidate: () => undefined,
      },
    } as unknown as ProviderSettings;
    const channel = {
      type: 41,
      key,
      baseUrl: '',
      organization: '',
      other: '{"default":"global","veo-3.0-generate-001":"europe-west4"}',
    };
    const body = { model: 'veo-3.0-generate-001', prompt: 'p', parameters: { durationSeconds: 8 } };
    const submit = await vertexVeoTask.buildSubmit(channel, 'textGenerate', body, { settings });
    expect(submit).toMatchObject({
      method: 'POST',
      url: 'https://europe-west4-aiplatform.googleapis.com/v1/projects/p-1/locations/europe-west4/publishers/google/models/veo-3.0-generate-001:predictLongRunning',
      headers: { authorization: 'Bearer tok' },
    });
    const other = { ...body, model: 'veo-3.1-generate-preview' };
    expect((await vertexVeoTask.buildSubmit(channel, 'textGenerate', other, { settings })).url).toBe(
      'https://aiplatform.googleapis.com/v1/projects/p-1/locations/global/publishers/google/models/veo-3.1-generate-preview:predictLongRunning',
    );
    const fetch = await vertexVeoTask.buildFetch(channel, [NAME], [], { settings });
    expect(fetch).toMatchObject({
      url: 'https://us-central1-aiplatform.googleapis.com/v1/projects/p-1/locations/us-central1/publishers/google/models/veo-3.0-generate-001:fetchPredictOperation',
      body: JSON.stringify({ operationName: NAME }),
    });
    expect(asked).toEqual(['vertex:true', 'vertex:true', 'vertex:true']);
    await expect(async () => vertexVeoTask.buildFetch(channel, ['../x'], [], { settings })).rejects.toThrow();
    await expect(async () => vertexVeoTask.buildSubmit(channel, 'textGenerate', body, {})).rejects.toThrow();
  });
});
