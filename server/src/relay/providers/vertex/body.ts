// An Anthropic Messages body → the body Vertex AI's rawPredict expects for Claude: the model is in the URL (Vertex
// refuses it in the body), the API version goes in the body, and unlike Bedrock `stream` stays: streamRawPredict
// still reads it.

export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

export function toVertexClaudeBody(anthropicBody: Record<string, unknown>): Record<string, unknown> {
  const { model: _model, anthropic_version: _version, ...rest } = anthropicBody;
  return { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest };
}
