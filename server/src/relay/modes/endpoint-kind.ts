// The endpoints a client can ask for, the keys of a provider's manifest (providers/manifest.ts). The OpenAI API's
// endpoints by their relay mode's name; chat-like requests of other client formats (Claude messages, Gemini
// generateContent) are `chat`, Gemini's embedContent is `embeddings`. `task` (asynchronous jobs: video, music) and
// `realtime` (websockets) are slots no provider declares yet: requests for them are refused like any undeclared one.
// `/v1/realtime` itself is served outside the lanes (relay/realtime/: OpenAI, Azure and the OpenAI-compatible types).
export const ENDPOINT_KINDS = [
  'chat',
  'completions',
  'embeddings',
  'edits',
  'images',
  'image_edits',
  'audio_speech',
  'audio_transcription',
  'audio_translation',
  'rerank',
  'moderations',
  'responses',
  'task',
  'realtime',
] as const;

export type EndpointKind = (typeof ENDPOINT_KINDS)[number];
