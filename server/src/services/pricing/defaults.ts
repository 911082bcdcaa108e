// Compiled-in price tables (facts §6.2). Ratio 1 = $2 per 1M input tokens; prices are USD per call.
// STARTER TABLE: extended to new-api's full default list by the pricing module owner.
export const DEFAULT_MODEL_RATIO: Record<string, number> = {
  'gpt-3.5-turbo': 0.25,
  'gpt-4': 15,
  'gpt-4o': 1.25,
  'gpt-4o-mini': 0.075,
  'text-embedding-3-small': 0.01,
  'text-embedding-3-large': 0.065,
  'text-embedding-ada-002': 0.05,
  'whisper-1': 15,
  'tts-1': 7.5,
  'deepseek-chat': 0.135,
  'deepseek-reasoner': 0.275,
};

export const DEFAULT_MODEL_PRICE: Record<string, number> = {
  'dall-e-3': 0.04,
  suno_music: 0.1,
  suno_lyrics: 0.01,
};

export const DEFAULT_COMPLETION_RATIO: Record<string, number> = {
  'gpt-4-gizmo-*': 2,
  'gpt-4o-gizmo-*': 3,
  'gpt-4-all': 2,
};

export const DEFAULT_CACHE_RATIO: Record<string, number> = {
  'gpt-4o': 0.5,
  'gpt-4o-mini': 0.5,
  'deepseek-chat': 0.25,
  'deepseek-reasoner': 0.25,
};
