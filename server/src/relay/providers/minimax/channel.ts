// Channel facts of MiniMax: a plain API key. MiniMax lists no models in OpenAI's shape: the console offers its chat
// and speech models.
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const MINIMAX_MODELS: readonly string[] = [
  'MiniMax-M1',
  'MiniMax-Text-01',
  'abab6.5s-chat',
  'abab6.5-chat',
  'abab5.5-chat',
  'speech-02-hd',
  'speech-02-turbo',
  'speech-01-hd',
];

export const minimaxChannelFacts = (): ChannelFacts => plainFacts({ models: { fixed: MINIMAX_MODELS } });
