// Veo's answers on Vertex AI read into the task engine's terms. The request, its checks and its price are Veo's
// (../veo/adaptor.ts, shared with the Gemini API); what differs is the operation: its name is a path under the
// project and region (`projects/{p}/locations/{r}/publishers/google/models/{m}/operations/{id}`) and its response
// lists `videos` each as a Cloud Storage URI (`gcsUri`, when the submit named a storageUri) or the bytes themselves
// (`bytesBase64Encoded`).
import type { TaskStateRead } from '../types.js';
import { asObject, readVeoOperation, type VeoOutcome } from '../veo/adaptor.js';
import { isVertexLocation } from '../vertex/region.js';

const OPERATION = /^projects\/([^/]+)\/locations\/([^/]+)\/publishers\/google\/models\/([^/]+)\/operations\/([^/]+)$/;
const SEGMENT = /^[A-Za-z0-9._@-]+$/;

export interface VertexOperation {
  project: string;
  region: string;
  model: string;
  name: string;
}

/** An operation's name taken apart, or null when it is not a plain Vertex operation path (it came from the upstream). */
export function parseVertexOperation(name: string): VertexOperation | null {
  const m = OPERATION.exec(name);
  if (!m || !m.slice(1).every((part) => SEGMENT.test(part) && part !== '..') || !isVertexLocation(m[2])) return null;
  return { project: m[1], region: m[2], model: m[3], name };
}

/** The operation's name of a `predictLongRunning` answer, or null when it refused. */
export function readVertexVeoSubmit(status: number, body: unknown): string | null {
  const name = asObject(body)?.name;
  if (status < 200 || status >= 300 || typeof name !== 'string' || !parseVertexOperation(name)) return null;
  return name;
}

function firstVideo(op: unknown): Record<string, unknown> | null {
  const videos = asObject(asObject(op)?.response)?.videos;
  return Array.isArray(videos) ? asObject(videos[0]) : null;
}

/** The first video's Cloud Storage URI, '' when it has none (not written to a bucket, or no video). */
export function vertexVeoVideoUri(operation: unknown): string {
  const uri = firstVideo(operation)?.gcsUri;
  return typeof uri === 'string' ? uri : '';
}

/** The first video's bytes where the operation answers them inline (`bytesBase64Encoded`), else null. */
export function vertexVeoInlineVideo(operation: unknown): { bytes: Buffer; mimeType: string } | null {
  const video = firstVideo(operation);
  const encoded = video?.bytesBase64Encoded;
  if (typeof encoded !== 'string' || !encoded) return null;
  const type =
    typeof video?.mimeType === 'string' && /^video\/[\w.+-]+$/.test(video.mimeType) ? video.mimeType : 'video/mp4';
  return { bytes: Buffer.from(encoded, 'base64'), mimeType: type };
}

function outcome(op: Record<string, unknown>): VeoOutcome {
  const video = firstVideo(op);
  const made = typeof video?.gcsUri === 'string' && video.gcsUri ? video.gcsUri : video?.bytesBase64Encoded;
  const reasons = asObject(op.response)?.raiMediaFilteredReasons;
  return {
    video: typeof made === 'string' ? made : '',
    filtered: Array.isArray(reasons) && typeof reasons[0] === 'string' ? reasons[0] : '',
  };
}

/**
 * What the task row keeps of an operation: all of it but the videos' bytes, which are megabytes (beyond a MySQL TEXT
 * column, and resent on every read of the task); their size stays, so the row says a video was made.
 */
function kept(op: Record<string, unknown>): unknown {
  const response = asObject(op.response);
  if (!response || !Array.isArray(response.videos)) return op;
  const videos = response.videos.map((v) => {
    const video = asObject(v);
    if (!video || typeof video.bytesBase64Encoded !== 'string') return v;
    const { bytesBase64Encoded: bytes, ...rest } = video;
    return { ...rest, byteSize: Math.floor((bytes.length * 3) / 4) - (bytes.match(/=+$/)?.[0].length ?? 0) };
  });
  return { ...op, response: { ...response, videos } };
}

/** The state of an operation from `:fetchPredictOperation` (readVeoOperation's rules). */
export function readVertexVeoFetch(status: number, body: unknown, askedName?: string): TaskStateRead[] | null {
  return readVeoOperation(status, body, askedName, outcome, kept);
}
