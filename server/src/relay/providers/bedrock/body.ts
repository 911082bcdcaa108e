// An Anthropic Messages body → the body Bedrock's InvokeModel expects for Claude: the model is in the URL and the
// choice between invoke and invoke-with-response-stream says whether to stream, so Bedrock refuses both fields;
// the API version goes in the body instead of the `anthropic-version` header.

export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

export function toBedrockClaudeBody(anthropicBody: Record<string, unknown>): Record<string, unknown> {
  const { model: _model, stream: _stream, anthropic_version: _version, ...rest } = anthropicBody;
  return { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest };
}
