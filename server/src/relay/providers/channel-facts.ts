// The providers' registry: one line per provider with its channel types, its channel facts
// (channel-facts-contract.ts) and the import of its folder; and the checks of a channel's fields common to every
// provider (a required base URL, one key per line). Channel management (services/) imports this module and nothing
// else of the relay: it and the modules it imports statically are leaves (eslint.config.js); a provider's folder is
// imported only when the relay calls its line's `load`.
import type { ChannelFacts, FieldProblem } from './channel-facts-contract.js';
import type { Adaptor } from './types.js';
import { OPENAI_COMPATIBLE_TYPES, openaiChannelFacts } from './openai/channel.js';
import { azureChannelFacts } from './azure/channel.js';
import { ollamaChannelFacts } from './ollama/channel.js';
import { anthropicChannelFacts } from './anthropic/channel.js';
import { geminiChannelFacts } from './gemini/channel.js';
import { bedrockChannelFacts } from './bedrock/channel.js';
import { vertexChannelFacts } from './vertex/channel.js';
import { sunoChannelFacts } from './suno/channel.js';
import { soraChannelFacts } from './sora/channel.js';
import { klingChannelFacts } from './kling/channel.js';
import { viduChannelFacts } from './vidu/channel.js';
import { jimengChannelFacts } from './jimeng/channel.js';
import { doubaoVideoChannelFacts } from './doubao-video/channel.js';
import { zhipuChannelFacts } from './zhipu/channel.js';
import { qianfanChannelFacts } from './qianfan/channel.js';
import { jinaChannelFacts } from './jina/channel.js';
import { cloudflareChannelFacts } from './cloudflare/channel.js';
import { mokaChannelFacts } from './moka/channel.js';
import { submodelChannelFacts } from './submodel/channel.js';
import { baiduChannelFacts } from './baidu/channel.js';
import { zhipuV3ChannelFacts } from './zhipuv3/channel.js';
import { hunyuanChannelFacts } from './hunyuan/channel.js';
import { sparkChannelFacts } from './spark/channel.js';
import { aliChannelFacts } from './ali/channel.js';
import { cohereChannelFacts } from './cohere/channel.js';
import { minimaxChannelFacts } from './minimax/channel.js';
import { difyChannelFacts } from './dify/channel.js';
import { cozeChannelFacts } from './coze/channel.js';
import { palmChannelFacts } from './palm/channel.js';

export type {
  ChannelFacts,
  ChannelField,
  FieldProblem,
  GetJson,
  OtherFieldKind,
  UpstreamAccount,
} from './channel-facts-contract.js';
export { openAIModelsUrl } from './channel-facts-contract.js';
export { OPENAI_COMPATIBLE_TYPES } from './openai/channel.js';

/**
 * One line per provider, the one place a provider is registered: its id (its folder under providers/), the channel
 * types it serves, its channel facts (its folder's channel.ts, which channel management reads without the relay) and
 * how to import its folder (providers/index.ts does, on the first request of one of its types; `task` platforms at
 * start). services/channel-protocols.ts maps each type to its provider from these lines.
 */
export interface ProviderLine {
  readonly id: string;
  readonly types: readonly number[];
  /** absent for a task platform without its own (services/channel-protocols.ts gives it the task platforms' facts) */
  readonly facts?: (type: number) => ChannelFacts;
  readonly load: () => Promise<Adaptor>;
  /** an asynchronous task platform (relay/tasks/): no relay endpoint, loaded at start */
  readonly task?: true;
}

export const PROVIDER_LINES: readonly ProviderLine[] = [
  {
    id: 'openai',
    types: OPENAI_COMPATIBLE_TYPES,
    facts: openaiChannelFacts,
    load: async () => (await import('./openai/index.js')).openaiAdaptor,
  },
  {
    id: 'azure',
    types: [3],
    facts: azureChannelFacts,
    load: async () => (await import('./azure/index.js')).azureAdaptor,
  },
  {
    id: 'ollama',
    types: [4],
    facts: ollamaChannelFacts,
    load: async () => (await import('./ollama/index.js')).ollamaAdaptor,
  },
  {
    id: 'anthropic',
    types: [14],
    facts: anthropicChannelFacts,
    load: async () => (await import('./anthropic/index.js')).anthropicAdaptor,
  },
  {
    id: 'gemini',
    types: [24],
    facts: geminiChannelFacts,
    load: async () => (await import('./gemini/index.js')).geminiAdaptor,
  },
  {
    id: 'bedrock',
    types: [33],
    facts: bedrockChannelFacts,
    load: async () => (await import('./bedrock/index.js')).bedrockAdaptor,
  },
  {
    id: 'vertex',
    types: [41],
    facts: vertexChannelFacts,
    load: async () => (await import('./vertex/index.js')).vertexAdaptor,
  },
  {
    id: 'zhipu',
    types: [26],
    facts: zhipuChannelFacts,
    load: async () => (await import('./zhipu/index.js')).zhipuAdaptor,
  },
  {
    id: 'qianfan',
    types: [46],
    facts: qianfanChannelFacts,
    load: async () => (await import('./qianfan/index.js')).qianfanAdaptor,
  },
  { id: 'jina', types: [38], facts: jinaChannelFacts, load: async () => (await import('./jina/index.js')).jinaAdaptor },
  {
    id: 'cloudflare',
    types: [39],
    facts: cloudflareChannelFacts,
    load: async () => (await import('./cloudflare/index.js')).cloudflareAdaptor,
  },
  { id: 'moka', types: [44], facts: mokaChannelFacts, load: async () => (await import('./moka/index.js')).mokaAdaptor },
  {
    id: 'submodel',
    types: [53],
    facts: submodelChannelFacts,
    load: async () => (await import('./submodel/index.js')).submodelAdaptor,
  },
  {
    id: 'baidu',
    types: [15],
    facts: baiduChannelFacts,
    load: async () => (await import('./baidu/index.js')).baiduAdaptor,
  },
  {
    id: 'zhipuv3',
    types: [16],
    facts: zhipuV3ChannelFacts,
    load: async () => (await import('./zhipuv3/index.js')).zhipuV3Adaptor,
  },
  {
    id: 'hunyuan',
    types: [23],
    facts: hunyuanChannelFacts,
    load: async () => (await import('./hunyuan/index.js')).hunyuanAdaptor,
  },
  {
    id: 'spark',
    types: [18],
    facts: sparkChannelFacts,
    load: async () => (await import('./spark/index.js')).sparkAdaptor,
  },
  {
    id: 'ali',
    types: [17],
    facts: aliChannelFacts,
    load: async () => (await import('./ali/index.js')).aliAdaptor,
  },
  {
    id: 'cohere',
    types: [34],
    facts: cohereChannelFacts,
    load: async () => (await import('./cohere/index.js')).cohereAdaptor,
  },
  {
    id: 'minimax',
    types: [35],
    facts: minimaxChannelFacts,
    load: async () => (await import('./minimax/index.js')).minimaxAdaptor,
  },
  {
    id: 'dify',
    types: [37],
    facts: difyChannelFacts,
    load: async () => (await import('./dify/index.js')).difyAdaptor,
  },
  {
    id: 'coze',
    types: [49],
    facts: cozeChannelFacts,
    load: async () => (await import('./coze/index.js')).cozeAdaptor,
  },
  {
    id: 'palm',
    types: [11],
    facts: palmChannelFacts,
    load: async () => (await import('./palm/index.js')).palmAdaptor,
  },
  // Suno: asynchronous tasks only (relay/tasks/), never a chat request
  {
    id: 'suno',
    types: [36],
    facts: sunoChannelFacts,
    load: async () => (await import('./suno/index.js')).sunoAdaptor,
    task: true,
  },
  // Sora: OpenAI's video API as asynchronous tasks (relay/tasks/video-*.ts); OpenAI channels (type 1) take them too
  {
    id: 'sora',
    types: [55],
    facts: soraChannelFacts,
    load: async () => (await import('./sora/index.js')).soraAdaptor,
    task: true,
  },
  // Kling: video tasks (relay/tasks/video-generations.ts and its native /kling routes)
  {
    id: 'kling',
    types: [50],
    facts: klingChannelFacts,
    load: async () => (await import('./kling/index.js')).klingAdaptor,
    task: true,
  },
  // Veo: video tasks on Gemini channels (type 24, the gemini line's), so no type of its own
  {
    id: 'veo',
    types: [],
    load: async () => (await import('./veo/index.js')).veoAdaptor,
    task: true,
  },
  // Veo on Vertex AI: video tasks on Vertex channels (type 41, the vertex line's), so no type of its own
  {
    id: 'vertex-veo',
    types: [],
    load: async () => (await import('./vertex-veo/index.js')).vertexVeoAdaptor,
    task: true,
  },
  // Vidu: video tasks (relay/tasks/video-generations.ts)
  {
    id: 'vidu',
    types: [52],
    facts: viduChannelFacts,
    load: async () => (await import('./vidu/index.js')).viduAdaptor,
    task: true,
  },
  // Jimeng: Volcengine visual video tasks (relay/tasks/video-generations.ts and its native /jimeng/ route)
  {
    id: 'jimeng',
    types: [51],
    facts: jimengChannelFacts,
    load: async () => (await import('./jimeng/index.js')).jimengAdaptor,
    task: true,
  },
  // Doubao video: Seedance tasks on VolcEngine Ark (type 54, and VolcEngine's type 45 whose chat is OpenAI's line)
  {
    id: 'doubao-video',
    types: [54],
    facts: doubaoVideoChannelFacts,
    load: async () => (await import('./doubao-video/index.js')).doubaoVideoAdaptor,
    task: true,
  },
  // Hailuo: video tasks on MiniMax channels (type 35, the minimax line's), so no type of its own
  {
    id: 'hailuo',
    types: [],
    load: async () => (await import('./hailuo/index.js')).hailuoAdaptor,
    task: true,
  },
  // Wan: DashScope video tasks on Ali channels (type 17, the ali line's), so no type of its own
  {
    id: 'wan',
    types: [],
    load: async () => (await import('./wan/index.js')).wanAdaptor,
    task: true,
  },
  // Midjourney Proxy and Midjourney Proxy Plus: drawing tasks only (relay/tasks/mj-*.ts)
  {
    id: 'midjourney',
    types: [2, 5],
    load: async () => (await import('./midjourney/provider.js')).midjourneyAdaptor,
    task: true,
  },
];

const LINE_BY_ID = new Map(PROVIDER_LINES.map((line) => [line.id, line]));

export function providerChannelFacts(protocol: string, type: number): ChannelFacts | undefined {
  return LINE_BY_ID.get(protocol)?.facts?.(type);
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
