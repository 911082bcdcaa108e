// Channel facts of Suno (type 36): a plain key sent as a Bearer token, and no default address (the Suno API is a
// service the operator runs or buys: new-api's type has none either). Its models are the two per-call prices.
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const sunoChannelFacts = (): ChannelFacts =>
  plainFacts({ baseUrlRequired: true, models: { fixed: ['suno_music', 'suno_lyrics'] } });
