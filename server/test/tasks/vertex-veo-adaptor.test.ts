// Veo on Vertex AI's reading of the upstream's words: operation names taken apart only when they are plain Vertex
// paths (they become a URL), answers that are not this operation asked again, the bytes of a video never kept.
import { describe, expect, it } from 'vitest';
import {
  parseVertexOperation,
  readVertexVeoFetch,
  readVertexVeoSubmit,
} from '../../src/relay/providers/vertex-veo/adaptor.js';

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
});
