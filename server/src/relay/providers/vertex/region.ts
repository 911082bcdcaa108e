// The Vertex AI location a model is called in, from the channel's `other` field: either one region for every
// model (`us-central1`) or a JSON object per model with a `default` (`{"default":"us-east5","gemini-2.5-pro":
// "global"}`), because Claude and Gemini models are offered in different regions. Nothing set → `global`.
// The JSON is keyed by the model name the client asked for, as new-api reads it (new-api-compat.md §4.7): an operator
// writes the names their users send; the names after model mapping and suffix stripping are tried next.

export const VERTEX_DEFAULT_REGION = 'global';

// A location is `global` or like `us-central1` / `europe-west4`: anything else must not reach the hostname.
const LOCATION = /^(global|[a-z]+(-[a-z]+)*\d+)$/;

export class VertexRegionError extends Error {}

/** Whether `region` may name a Vertex AI location (and so a hostname). */
export function isVertexLocation(region: string): boolean {
  return LOCATION.test(region);
}

/**
 * The region for a call; `models` are the names to look the region up by, in order (the client's, the mapped one,
 * the one sent): the first with an entry wins, else `default`.
 */
export function vertexRegion(other: string, models: string | readonly string[]): string {
  const names = typeof models === 'string' ? [models] : models;
  const text = other.trim();
  if (!text) return VERTEX_DEFAULT_REGION;
  let region: string;
  if (text.startsWith('{')) {
    let map: unknown;
    try {
      map = JSON.parse(text);
    } catch {
      throw new VertexRegionError('Vertex AI region: the channel setting starts with "{" but is not valid JSON');
    }
    if (!map || typeof map !== 'object' || Array.isArray(map)) {
      throw new VertexRegionError('Vertex AI region: the JSON must be an object of model → region');
    }
    const byModel = map as Record<string, unknown>;
    const named = names.find((n) => Object.hasOwn(byModel, n) && byModel[n] !== '');
    const picked = named === undefined ? byModel.default : byModel[named];
    if (picked === undefined || picked === '') return VERTEX_DEFAULT_REGION;
    if (typeof picked !== 'string')
      throw new VertexRegionError(`Vertex AI region for "${named ?? 'default'}" must be a string`);
    region = picked.trim();
  } else {
    region = text;
  }
  if (!isVertexLocation(region)) throw new VertexRegionError(`Vertex AI region: "${region}" is not a location`);
  return region;
}
