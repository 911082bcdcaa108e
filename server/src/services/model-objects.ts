// OpenAI model objects (new-api-compat.md §4.10), shared by GET /v1/models and the console's GET /api/channel/models.
import { CHANNEL_TYPES } from './channel-types.js';

/** new-api's fixed `created` for model objects. */
const CREATED = 1626777600;

function permission() {
  return [
    {
      id: 'modelperm-LwHkVFn8AcMItP432fKKDIKJ',
      object: 'model_permission',
      created: CREATED,
      allow_create_engine: true,
      allow_sampling: true,
      allow_logprobs: true,
      allow_search_indices: false,
      allow_view: true,
      allow_fine_tuning: false,
      organization: '*',
      group: null,
      is_blocking: false,
    },
  ];
}

/**
 * owned_by: the name of the new-api adaptor that serves a channel type (its ChannelName); types without an adaptor
 * of their own go through OpenAI's. new-api names Baidu v2's adaptor "volcengine" by a copy-paste slip; it is
 * "baidu_v2" here.
 */
const ADAPTOR_NAMES: Record<number, string> = {
  2: 'midjourney',
  4: 'ollama',
  5: 'midjourney',
  11: 'google palm',
  14: 'claude',
  15: 'baidu',
  16: 'zhipu',
  17: 'ali',
  18: 'xunfei',
  19: 'ai360',
  20: 'openrouter',
  23: 'tencent',
  24: 'google gemini',
  25: 'moonshot',
  26: 'zhipu_4v',
  27: 'perplexity',
  31: 'lingyiwanwu',
  33: 'aws',
  34: 'cohere',
  35: 'minimax',
  36: 'suno',
  37: 'dify',
  38: 'jina',
  39: 'cloudflare',
  40: 'siliconflow',
  41: 'vertex-ai',
  42: 'mistral',
  43: 'deepseek',
  44: 'mokaai',
  45: 'volcengine',
  46: 'baidu_v2',
  47: 'xinference',
  48: 'xai',
  49: 'coze',
};

let ownerIndex: Map<string, string> | null = null;
function ownerOf(model: string): string | undefined {
  if (!ownerIndex) {
    ownerIndex = new Map();
    for (const t of Object.values(CHANNEL_TYPES))
      for (const m of t.models) if (!ownerIndex.has(m)) ownerIndex.set(m, ADAPTOR_NAMES[t.type] ?? 'openai');
  }
  return ownerIndex.get(model);
}

/** A model of a built-in channel type (the list GET /v1/models/:model answers for). */
export function isBuiltInModel(id: string): boolean {
  return ownerOf(id) !== undefined;
}

export const modelObject = (id: string) => ({
  id,
  object: 'model',
  created: CREATED,
  owned_by: ownerOf(id) ?? 'custom',
  permission: permission(),
  root: id,
  parent: null,
});

/** Every model of the built-in channel types, once each (the first type that lists it owns it). */
export function builtInModelObjects() {
  const seen = new Set<string>();
  const list: Array<ReturnType<typeof modelObject>> = [];
  for (const info of Object.values(CHANNEL_TYPES)) {
    for (const id of info.models) {
      if (seen.has(id)) continue;
      seen.add(id);
      list.push(modelObject(id));
    }
  }
  return list;
}
