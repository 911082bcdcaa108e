// The registry of the providers' channel facts (channel-facts-contract.ts), and the checks of a channel's fields
// common to every provider (a required base URL, one key per line). Channel management (services/) imports this
// module and nothing else of the relay: it and the modules it imports are leaves (eslint.config.js).
import type { ChannelFacts, FieldProblem } from './channel-facts-contract.js';
import { openaiChannelFacts } from './openai/channel.js';
import { azureChannelFacts } from './azure/channel.js';
import { ollamaChannelFacts } from './ollama/channel.js';
import { anthropicChannelFacts } from './anthropic/channel.js';
import { geminiChannelFacts } from './gemini/channel.js';
import { bedrockChannelFacts } from './bedrock/channel.js';
import { vertexChannelFacts } from './vertex/channel.js';

export type {
  ChannelFacts,
  ChannelField,
  FieldProblem,
  GetJson,
  OtherFieldKind,
  UpstreamAccount,
} from './channel-facts-contract.js';
export { openAIModelsUrl } from './channel-facts-contract.js';

/** Each provider's facts by the protocol name services/channel-protocols.ts maps channel types to. */
const FACTS_BY_PROTOCOL = {
  openai: openaiChannelFacts,
  azure: azureChannelFacts,
  ollama: ollamaChannelFacts,
  anthropic: anthropicChannelFacts,
  gemini: geminiChannelFacts,
  bedrock: bedrockChannelFacts,
  vertex: vertexChannelFacts,
} satisfies Record<string, (type: number) => ChannelFacts>;

export type FactsProtocol = keyof typeof FACTS_BY_PROTOCOL;

export function providerChannelFacts(protocol: string, type: number): ChannelFacts | undefined {
  return Object.hasOwn(FACTS_BY_PROTOCOL, protocol) ? FACTS_BY_PROTOCOL[protocol as FactsProtocol](type) : undefined;
}

/** The channels a key makes: one per non-empty line, or the whole key when it is one document. */
export function channelKeys(facts: ChannelFacts, key: string): string[] {
  if (facts.wholeKey) return key.trim() ? [key.trim()] : [];
  return key
    .split('\n')
    .map((k) => k.trim())
    .filter(Boolean);
}

/** The fields of a save (or of the console's form) to check; what is absent is not checked. */
export interface ChannelCheckInput {
  /** the key as entered (one channel per line unless the key is whole); absent or blank: not checked */
  key?: string;
  /** absent: not checked */
  other?: string;
  /** the channel's base URL, trailing slashes stripped, '' for the type's default */
  baseUrl: string;
  /** whether this save sets the base URL (or the type), so a required one is asked for */
  checkBaseUrl: boolean;
  /** the type's default base URL (services/channel-types.ts) */
  defaultBaseUrl: string;
}

function baseUrlProblem(baseUrl: string): FieldProblem | null {
  const problem = (message: string): FieldProblem => ({ field: 'base_url', message });
  if (!baseUrl) return problem('该渠道类型必须填写代理地址（Base URL）');
  let url: URL | null = null;
  try {
    url = new URL(baseUrl);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.host)
    return problem('代理地址（Base URL）必须是以 http:// 或 https:// 开头的合法地址');
  return null;
}

/** The first problem of a channel's fields: the base URL, then the provider's rules on `other` and every key. */
export function channelFieldsProblem(facts: ChannelFacts, input: ChannelCheckInput): FieldProblem | null {
  if (input.checkBaseUrl && facts.baseUrlRequired) {
    const problem = baseUrlProblem(input.baseUrl);
    if (problem) return problem;
  }
  const keys = channelKeys(facts, input.key ?? '');
  const values = { baseUrl: input.baseUrl, defaultBaseUrl: input.defaultBaseUrl, other: input.other };
  for (const key of keys.length ? keys : ['']) {
    const problem = facts.check({ ...values, key });
    if (problem) return problem;
  }
  return null;
}
