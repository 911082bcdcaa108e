// Channel type codes (spec §3, new-api-compat.md §7): display name and default base URL. The relay resolves a channel's
// upstream from here; the console lists types and their built-in models from here.
export interface ChannelTypeInfo {
  type: number;
  name: string;
  /** Default upstream base URL (no trailing slash); empty when the operator must supply one. */
  baseUrl: string;
  /** Built-in model names offered for this type (GET /api/models). */
  models: string[];
}

const t = (type: number, name: string, baseUrl: string, models: string[] = []): ChannelTypeInfo => ({ type, name, baseUrl, models });

export const CHANNEL_TYPES: Record<number, ChannelTypeInfo> = Object.fromEntries(
  [
    t(1, 'OpenAI', 'https://api.openai.com', ['gpt-3.5-turbo', 'gpt-3.5-turbo-0125', 'gpt-3.5-turbo-1106', 'gpt-3.5-turbo-16k', 'gpt-3.5-turbo-instruct', 'gpt-4', 'gpt-4-0613', 'gpt-4-32k', 'gpt-4-turbo', 'gpt-4-turbo-2024-04-09', 'gpt-4-turbo-preview', 'gpt-4-vision-preview', 'gpt-4.5-preview', 'gpt-4o', 'gpt-4o-2024-05-13', 'gpt-4o-2024-08-06', 'gpt-4o-2024-11-20', 'chatgpt-4o-latest', 'gpt-4o-mini', 'gpt-4o-mini-2024-07-18', 'gpt-4o-audio-preview', 'gpt-4o-realtime-preview', 'gpt-4o-mini-realtime-preview', 'o1', 'o1-2024-12-17', 'o1-preview', 'o1-mini', 'o3-mini', 'o3-mini-high', 'o3-mini-low', 'text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002', 'text-moderation-latest', 'text-moderation-stable', 'dall-e-2', 'dall-e-3', 'whisper-1', 'tts-1', 'tts-1-1106', 'tts-1-hd', 'tts-1-hd-1106']),
    t(2, 'Midjourney Proxy', '', ['mj_imagine', 'mj_variation', 'mj_reroll', 'mj_blend', 'mj_upscale', 'mj_describe', 'mj_uploads']),
    t(3, 'Azure OpenAI', '', ['gpt-3.5-turbo', 'gpt-4', 'gpt-4-turbo', 'gpt-4o', 'gpt-4o-mini', 'o1', 'o1-mini', 'o3-mini', 'text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002', 'dall-e-3', 'whisper-1', 'tts-1']),
    t(4, 'Ollama', 'http://localhost:11434', ['llama3.1', 'llama3.2', 'qwen2.5', 'deepseek-r1', 'mistral', 'gemma2', 'nomic-embed-text']),
    t(5, 'Midjourney Proxy Plus', '', ['mj_imagine', 'mj_variation', 'mj_reroll', 'mj_blend', 'mj_upscale', 'mj_describe', 'mj_zoom', 'mj_shorten', 'mj_modal', 'mj_inpaint', 'mj_custom_zoom', 'mj_high_variation', 'mj_low_variation', 'mj_pan', 'mj_uploads', 'swap_face']),
    t(8, '自定义渠道', '', ['gpt-3.5-turbo', 'gpt-4o', 'gpt-4o-mini']),
    t(11, 'Google PaLM2', '', ['PaLM-2']),
    t(14, 'Anthropic Claude', 'https://api.anthropic.com', ['claude-instant-1.2', 'claude-2', 'claude-2.0', 'claude-2.1', 'claude-3-haiku-20240307', 'claude-3-sonnet-20240229', 'claude-3-opus-20240229', 'claude-3-5-haiku-20241022', 'claude-3-5-sonnet-20240620', 'claude-3-5-sonnet-20241022', 'claude-3-7-sonnet-20250219', 'claude-3-7-sonnet-20250219-thinking']),
    t(15, '百度文心千帆', 'https://aip.baidubce.com', ['ERNIE-4.0-8K', 'ERNIE-3.5-8K', 'ERNIE-Speed-8K', 'ERNIE-Speed-128K', 'ERNIE-Lite-8K', 'ERNIE-Tiny-8K', 'ERNIE-Character-8K', 'ERNIE-Functions-8K', 'Embedding-V1', 'bge-large-zh', 'bge-large-en', 'tao-8k']),
    t(16, '智谱 ChatGLM', 'https://open.bigmodel.cn', ['chatglm_turbo', 'chatglm_pro', 'chatglm_std', 'chatglm_lite']),
    t(17, '阿里通义千问', 'https://dashscope.aliyuncs.com', ['qwen-turbo', 'qwen-plus', 'qwen-max', 'qwen-max-longcontext', 'qwen-long', 'qwen-vl-max', 'text-embedding-v1', 'text-embedding-v3', 'ali-stable-diffusion-xl', 'ali-stable-diffusion-v1.5', 'wanx-v1']),
    t(18, '讯飞星火认知', '', ['SparkDesk', 'SparkDesk-v1.1', 'SparkDesk-v2.1', 'SparkDesk-v3.1', 'SparkDesk-v3.5', 'SparkDesk-v4.0']),
    t(19, '360 智脑', 'https://api.360.cn', ['360GPT_S2_V9', 'embedding-bert-512-v1', 'embedding_s1_v1', 'semantic_similarity_s1_v1']),
    t(20, 'OpenRouter', 'https://openrouter.ai/api', ['openai/gpt-4o', 'openai/gpt-4o-mini', 'anthropic/claude-3.5-sonnet', 'google/gemini-2.0-flash-001', 'deepseek/deepseek-chat', 'meta-llama/llama-3.1-70b-instruct']),
    t(21, '知识库：AI Proxy', 'https://api.aiproxy.io', ['gpt-3.5-turbo']),
    t(22, '知识库：FastGPT', 'https://fastgpt.run/api/openapi', ['gpt-3.5-turbo']),
    t(23, '腾讯混元', 'https://hunyuan.tencentcloudapi.com', ['hunyuan-lite', 'hunyuan-standard', 'hunyuan-standard-256K', 'hunyuan-pro', 'hunyuan-turbo', 'hunyuan-vision', 'hunyuan-embedding']),
    t(24, 'Google Gemini', 'https://generativelanguage.googleapis.com', ['gemini-1.5-pro', 'gemini-1.5-pro-latest', 'gemini-1.5-flash', 'gemini-1.5-flash-latest', 'gemini-1.5-flash-8b', 'gemini-2.0-flash', 'gemini-2.0-flash-exp', 'gemini-2.0-flash-lite', 'gemini-2.0-flash-thinking-exp', 'gemini-2.0-pro-exp', 'gemini-2.5-pro-exp-03-25', 'gemini-2.5-pro-preview-03-25', 'text-embedding-004', 'imagen-3.0-generate-002']),
    t(25, 'Moonshot', 'https://api.moonshot.cn', ['moonshot-v1-8k', 'moonshot-v1-32k', 'moonshot-v1-128k']),
    t(26, '智谱 GLM-4V', 'https://open.bigmodel.cn', ['glm-4', 'glm-4v', 'glm-4-plus', 'glm-4-air', 'glm-4-airx', 'glm-4-flash', 'glm-4-long', 'glm-3-turbo', 'embedding-2', 'embedding-3', 'cogview-3']),
    t(27, 'Perplexity', 'https://api.perplexity.ai', ['sonar', 'sonar-pro', 'sonar-reasoning', 'sonar-reasoning-pro']),
    t(31, '零一万物', 'https://api.lingyiwanwu.com', ['yi-large', 'yi-medium', 'yi-vision', 'yi-medium-200k', 'yi-spark', 'yi-large-rag', 'yi-large-turbo', 'yi-lightning']),
    t(33, 'AWS Claude', '', ['claude-3-haiku-20240307', 'claude-3-sonnet-20240229', 'claude-3-opus-20240229', 'claude-3-5-haiku-20241022', 'claude-3-5-sonnet-20240620', 'claude-3-5-sonnet-20241022', 'claude-3-7-sonnet-20250219']),
    t(34, 'Cohere', 'https://api.cohere.ai', ['command', 'command-r', 'command-r-plus', 'command-r-08-2024', 'command-r-plus-08-2024', 'command-light', 'c4ai-aya-23-35b', 'c4ai-aya-23-8b', 'rerank-english-v3.0', 'rerank-multilingual-v3.0']),
    t(35, 'MiniMax', 'https://api.minimax.chat', ['abab6.5-chat', 'abab6.5s-chat', 'abab6-chat', 'abab5.5-chat', 'abab5.5s-chat']),
    t(36, 'Suno API', '', ['suno_music', 'suno_lyrics']),
    t(37, 'Dify', 'https://api.dify.ai', ['dify']),
    t(38, 'Jina', 'https://api.jina.ai', ['jina-clip-v1', 'jina-reranker-v2-base-multilingual', 'jina-embeddings-v3']),
    t(39, 'Cloudflare', 'https://api.cloudflare.com', ['@cf/meta/llama-3.1-8b-instruct', '@cf/meta/llama-3-8b-instruct', '@cf/mistral/mistral-7b-instruct-v0.1', '@cf/qwen/qwen1.5-14b-chat-awq', '@cf/baai/bge-base-en-v1.5', '@cf/openai/whisper']),
    t(40, 'SiliconCloud', 'https://api.siliconflow.cn', ['deepseek-ai/DeepSeek-V3', 'deepseek-ai/DeepSeek-R1', 'Qwen/Qwen2.5-72B-Instruct', 'Qwen/Qwen2.5-7B-Instruct', 'THUDM/glm-4-9b-chat', 'BAAI/bge-m3', 'BAAI/bge-reranker-v2-m3']),
    t(41, 'Vertex AI', '', ['gemini-1.5-pro-001', 'gemini-1.5-flash-001', 'gemini-1.5-pro-002', 'gemini-1.5-flash-002', 'gemini-2.0-flash-001', 'claude-3-5-sonnet-20240620', 'claude-3-5-sonnet-20241022', 'claude-3-7-sonnet-20250219', 'claude-3-haiku-20240307', 'meta/llama3-405b-instruct-maas']),
    t(42, 'Mistral AI', 'https://api.mistral.ai', ['open-mistral-7b', 'open-mixtral-8x7b', 'open-mixtral-8x22b', 'mistral-small-latest', 'mistral-medium-latest', 'mistral-large-latest', 'codestral-latest', 'mistral-embed']),
    t(43, 'DeepSeek', 'https://api.deepseek.com', ['deepseek-chat', 'deepseek-reasoner', 'deepseek-coder']),
    t(44, '嵌入模型：MokaAI M3E', 'https://api.moka.ai', ['m3e-base', 'm3e-small', 'm3e-large']),
    t(45, '字节火山方舟、豆包通用', 'https://ark.cn-beijing.volces.com', ['Doubao-pro-128k', 'Doubao-pro-32k', 'Doubao-pro-4k', 'Doubao-lite-128k', 'Doubao-lite-32k', 'Doubao-lite-4k', 'Doubao-embedding', 'deepseek-r1-250120', 'deepseek-v3-241226']),
    t(46, '百度文心千帆V2', 'https://qianfan.baidubce.com', ['ernie-4.0-8k-latest', 'ernie-4.0-turbo-8k', 'ernie-3.5-8k', 'ernie-speed-128k', 'ernie-lite-8k', 'deepseek-v3', 'deepseek-r1']),
    t(47, 'Xinference', '', ['bge-reranker-v2-m3', 'jina-reranker-v2', 'qwen2.5-instruct']),
    t(48, 'xAI', 'https://api.x.ai', ['grok-beta', 'grok-vision-beta', 'grok-2', 'grok-2-1212', 'grok-2-vision-1212', 'grok-3', 'grok-3-mini']),
  ].map((info) => [info.type, info]),
);

/** The channel's own base URL if set, else its type's default, without a trailing slash. */
export function channelBaseUrl(type: number, baseUrl?: string | null): string {
  const own = (baseUrl ?? '').trim();
  return (own || CHANNEL_TYPES[type]?.baseUrl || '').replace(/\/+$/, '');
}

export function channelTypeName(type: number): string {
  return CHANNEL_TYPES[type]?.name ?? 'Unknown';
}
