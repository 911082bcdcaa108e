// Channel type codes (spec §3, facts §7): display name and default base URL. The relay resolves a channel's
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
    t(1, 'OpenAI', 'https://api.openai.com'),
    t(2, 'Midjourney Proxy', ''),
    t(3, 'Azure OpenAI', ''),
    t(4, 'Ollama', 'http://localhost:11434'),
    t(5, 'Midjourney Proxy Plus', ''),
    t(8, '自定义渠道', ''),
    t(11, 'Google PaLM2', ''),
    t(14, 'Anthropic Claude', 'https://api.anthropic.com'),
    t(15, '百度文心千帆', 'https://aip.baidubce.com'),
    t(16, '智谱 ChatGLM', 'https://open.bigmodel.cn'),
    t(17, '阿里通义千问', 'https://dashscope.aliyuncs.com'),
    t(18, '讯飞星火认知', ''),
    t(19, '360 智脑', 'https://api.360.cn'),
    t(20, 'OpenRouter', 'https://openrouter.ai/api'),
    t(21, '知识库：AI Proxy', 'https://api.aiproxy.io'),
    t(22, '知识库：FastGPT', 'https://fastgpt.run/api/openapi'),
    t(23, '腾讯混元', 'https://hunyuan.tencentcloudapi.com'),
    t(24, 'Google Gemini', 'https://generativelanguage.googleapis.com'),
    t(25, 'Moonshot', 'https://api.moonshot.cn'),
    t(26, '智谱 GLM-4V', 'https://open.bigmodel.cn'),
    t(27, 'Perplexity', 'https://api.perplexity.ai'),
    t(31, '零一万物', 'https://api.lingyiwanwu.com'),
    t(33, 'AWS Claude', ''),
    t(34, 'Cohere', 'https://api.cohere.ai'),
    t(35, 'MiniMax', 'https://api.minimax.chat'),
    t(36, 'Suno API', ''),
    t(37, 'Dify', 'https://api.dify.ai'),
    t(38, 'Jina', 'https://api.jina.ai'),
    t(39, 'Cloudflare', 'https://api.cloudflare.com'),
    t(40, 'SiliconCloud', 'https://api.siliconflow.cn'),
    t(41, 'Vertex AI', ''),
    t(42, 'Mistral AI', 'https://api.mistral.ai'),
    t(43, 'DeepSeek', 'https://api.deepseek.com'),
    t(44, '嵌入模型：MokaAI M3E', 'https://api.moka.ai'),
    t(45, '字节火山方舟、豆包通用', 'https://ark.cn-beijing.volces.com'),
    t(46, '百度文心千帆V2', 'https://qianfan.baidubce.com'),
    t(47, 'Xinference', ''),
    t(48, 'xAI', 'https://api.x.ai'),
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
