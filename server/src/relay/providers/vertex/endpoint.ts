// Where a Vertex AI model call goes. Google's models (publisher `google`) speak the Gemini API; Anthropic's
// (publisher `anthropic`) speak the Claude Messages API through rawPredict / streamRawPredict.
import { splitBase } from '../openai/index.js';
import type { UpstreamTarget } from '../types.js';

export type VertexPublisher = 'google' | 'anthropic';

export type GoogleAction =
  | 'generateContent'
  | 'streamGenerateContent'
  | 'countTokens'
  // Veo's long-running video generation and the read of its operation (providers/vertex-veo/)
  | 'predictLongRunning'
  | 'fetchPredictOperation';
export type AnthropicAction = 'rawPredict' | 'streamRawPredict';
export type VertexAction = GoogleAction | AnthropicAction;

export interface VertexTargetInput {
  project: string;
  region: string;
  publisher: VertexPublisher;
  model: string;
  /** the non-streaming action; `stream` picks its streaming counterpart */
  action: VertexAction;
  stream: boolean;
  baseUrl?: string;
}

const ACTIONS: Record<VertexPublisher, readonly VertexAction[]> = {
  google: ['generateContent', 'streamGenerateContent', 'countTokens', 'predictLongRunning', 'fetchPredictOperation'],
  anthropic: ['rawPredict', 'streamRawPredict'],
};

/** The streaming action for a call: generateContent ↔ streamGenerateContent, rawPredict ↔ streamRawPredict. */
function effectiveAction(publisher: VertexPublisher, action: VertexAction, stream: boolean): VertexAction {
  if (!ACTIONS[publisher].includes(action)) {
    throw new Error(`Vertex AI: publisher ${publisher} has no :${action} action`);
  }
  if (!stream) return action;
  if (action === 'generateContent') return 'streamGenerateContent';
  if (action === 'rawPredict') return 'streamRawPredict';
  return action;
}

export function vertexHost(region: string): string {
  return region === 'global' ? 'aiplatform.googleapis.com' : `${region}-aiplatform.googleapis.com`;
}

export function vertexTarget(input: VertexTargetInput): UpstreamTarget {
  const { project, region, publisher, model, stream, baseUrl } = input;
  const action = effectiveAction(publisher, input.action, stream);
  const { origin, prefix } = splitBase(baseUrl?.trim() || `https://${vertexHost(region)}`);
  const path =
    `${prefix}/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(region)}` +
    `/publishers/${publisher}/models/${encodeURIComponent(model)}:${action}`;
  // Gemini streams a JSON array unless asked for SSE; the relay reads SSE. Claude's streamRawPredict is always SSE.
  return { origin, path: action === 'streamGenerateContent' ? `${path}?alt=sse` : path };
}
