// Veo's long-running actions on the strict Vertex AI mock (helpers/mock-vertex.ts: its token endpoint verifies the
// service account's signed JWT grant, its model routes demand a live bearer token of that grant). On top of it:
// `:predictLongRunning` takes {instances: [{prompt}], parameters} with Vertex's Veo parameters only and answers an
// operation `projects/{p}/locations/{r}/publishers/google/models/{m}/operations/{uuid}`; `:fetchPredictOperation`
// takes {operationName} of an operation it made, asked for at the same project, region and model, and answers the
// state the test scripted. A project other than the account's, or a region other than the mock's, is refused as
// Google refuses it.
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { MockVertex, VertexRecordedRequest } from '../helpers/mock-vertex.js';

export interface VertexVeoState {
  done?: boolean;
  error?: string;
  gcsUri?: string;
  /** the video's bytes, answered base64-encoded */
  bytes?: Buffer;
  filtered?: string;
  http?: number;
}

export interface VertexVeoMock {
  calls: VertexRecordedRequest[];
  states: Map<string, VertexVeoState>;
}

const PARAMETERS = new Set([
  'aspectRatio',
  'durationSeconds',
  'negativePrompt',
  'personGeneration',
  'resolution',
  'storageUri',
]);

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function fail(res: http.ServerResponse, status: number, googleStatus: string, message: string): void {
  send(res, status, { error: { code: status, message, status: googleStatus } });
}

/** Serves Veo on `vertex` for the account of `project`, in `region` only. */
export function serveVertexVeo(vertex: MockVertex, project: string, region: string): VertexVeoMock {
  const mock: VertexVeoMock = { calls: [], states: new Map() };
  const operations = new Set<string>();
  // Google's answers to a call outside the account's project, or in a region the model is not served from
  const misplaced = (req: VertexRecordedRequest, res: http.ServerResponse) => {
    if (req.project !== project) {
      fail(res, 403, 'PERMISSION_DENIED', `Permission denied on resource project ${req.project}.`);
      return true;
    }
    if (req.location !== region) {
      fail(res, 404, 'NOT_FOUND', `Publisher Model ${req.model} was not found in ${req.location}.`);
      return true;
    }
    return false;
  };
  vertex.actions.set('predictLongRunning', (req, res) => {
    mock.calls.push(req);
    if (misplaced(req, res)) return;
    const body = req.body;
    if (Object.keys(body).sort().join() !== 'instances,parameters')
      return fail(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unknown top-level field');
    if (!Array.isArray(body.instances) || body.instances.length !== 1 || typeof body.instances[0].prompt !== 'string')
      return fail(res, 400, 'INVALID_ARGUMENT', 'instances[0].prompt is required');
    const unknown = Object.keys(body.parameters ?? {}).filter((k) => !PARAMETERS.has(k));
    if (unknown.length)
      return fail(res, 400, 'INVALID_ARGUMENT', `Invalid JSON payload received. Unknown name "${unknown[0]}"`);
    if (![4, 6, 8].includes(body.parameters.durationSeconds))
      return fail(res, 400, 'INVALID_ARGUMENT', 'durationSeconds out of range');
    const name = `projects/${project}/locations/${region}/publishers/google/models/${req.model}/operations/${randomUUID()}`;
    operations.add(name);
    send(res, 200, { name });
  });
  vertex.actions.set('fetchPredictOperation', (req, res) => {
    mock.calls.push(req);
    if (misplaced(req, res)) return;
    const name = req.body?.operationName;
    if (Object.keys(req.body).join() !== 'operationName' || typeof name !== 'string')
      return fail(res, 400, 'INVALID_ARGUMENT', 'operationName is required');
    // an operation is read at the model that runs it
    if (!operations.has(name) || !name.includes(`/models/${req.model}/operations/`))
      return fail(res, 404, 'NOT_FOUND', 'Operation not found');
    const st = mock.states.get(name) ?? {};
    if (st.http && st.http !== 200) return fail(res, st.http, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted');
    if (st.error) return send(res, 200, { name, done: true, error: { code: 3, message: st.error } });
    if (!st.done) return send(res, 200, { name });
    const type = 'type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse';
    const videos = st.gcsUri
      ? [{ gcsUri: st.gcsUri, mimeType: 'video/mp4' }]
      : st.bytes
        ? [{ bytesBase64Encoded: st.bytes.toString('base64'), mimeType: 'video/mp4' }]
        : [];
    const filtered = videos.length ? {} : { raiMediaFilteredReasons: [st.filtered ?? 'filtered'] };
    send(res, 200, {
      name,
      done: true,
      response: { '@type': type, raiMediaFilteredCount: videos.length ? 0 : 1, ...filtered, videos },
    });
  });
  return mock;
}
