// The Vertex AI location a model is called in, from the channel's `other` field: either one region for every
// model (`us-central1`) or a JSON object per model with a `default` (`{"default":"us-east5","gemini-2.5-pro":
// "global"}`), because Claude and Gemini models are offered in different regions. Nothing set → `global`.

export const VERTEX_DEFAULT_REGION = 'global';

// A location is `global` or like `us-central1` / `europe-west4`: anything else must not reach the hostname.
const LOCATION = /^(global|[a-z]+(-[a-z]+)*\d+)$/;

export class VertexRegionError extends Error {}

export function vertexRegion(other: string, model: string): string {
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
    const picked = byModel[model] ?? byModel.default;
    if (picked === undefined || picked === '') return VERTEX_DEFAULT_REGION;
    if (typeof picked !== 'string') throw new VertexRegionError(`Vertex AI region for "${model}" must be a string`);
    region = picked.trim();
  } else {
    region = text;
  }
  if (!LOCATION.test(region)) throw new VertexRegionError(`Vertex AI region: "${region}" is not a location`);
  return region;
}
