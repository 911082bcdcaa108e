// Where a Bedrock Runtime call goes: the regional endpoint, or the channel's base URL (a VPC endpoint, a test mock).
import { splitBase } from '../openai/index.js';
import type { UpstreamTarget } from '../types.js';

export interface BedrockTargetInput {
  region: string;
  /** a Bedrock model id or inference profile id, like `us.anthropic.claude-sonnet-4-20250514-v1:0` */
  modelId: string;
  stream: boolean;
  baseUrl?: string;
}

export function bedrockTarget({ region, modelId, stream, baseUrl }: BedrockTargetInput): UpstreamTarget {
  const base = baseUrl?.trim() || `https://bedrock-runtime.${region}.amazonaws.com`;
  const { origin, prefix } = splitBase(base);
  // The id's `:` is percent-encoded as the AWS SDK does; the signer then encodes the path once more for the
  // canonical request, which is what Bedrock expects.
  const action = stream ? 'invoke-with-response-stream' : 'invoke';
  return { origin, path: `${prefix}/model/${encodeURIComponent(modelId)}/${action}` };
}
