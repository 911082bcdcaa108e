// The model objects of Gemini's `GET /v1beta/models` and `GET /v1beta/models/{model}`, for Gemini clients (the
// Gemini CLI and @google/genai list models this way). The gateway does not know real limits per model: these are
// the documented figures of the current families, which is what the clients use them for (a context budget).

export interface GeminiModel {
  name: string;
  version: string;
  displayName: string;
  description: string;
  inputTokenLimit: number;
  outputTokenLimit: number;
  supportedGenerationMethods: string[];
}

function limits(id: string): { input: number; output: number } {
  if (id.includes('embedding')) return { input: 2048, output: 1 };
  if (/^gemini-(2\.5|[3-9])/.test(id)) return { input: 1048576, output: 65536 };
  if (id.startsWith('gemini-')) return { input: 1048576, output: 8192 };
  return { input: 128000, output: 8192 };
}

export function geminiModel(id: string): GeminiModel {
  const bare = id.replace(/^models\//, '');
  const { input, output } = limits(bare);
  const embedding = bare.includes('embedding');
  return {
    name: `models/${bare}`,
    version: /-(\d{3})$/.exec(bare)?.[1] ?? '001',
    displayName: bare,
    description: `${bare} via the gateway`,
    inputTokenLimit: input,
    outputTokenLimit: output,
    supportedGenerationMethods: embedding
      ? ['embedContent', 'batchEmbedContents']
      : ['generateContent', 'streamGenerateContent', 'countTokens'],
  };
}

export function geminiModelList(models: string[]): { models: GeminiModel[] } {
  return { models: models.map(geminiModel) };
}

export function countTokensResponse(totalTokens: number): { totalTokens: number } {
  return { totalTokens };
}
