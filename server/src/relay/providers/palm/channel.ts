// Channel facts of Google PaLM 2: a Google AI API key. The legacy API's model list is not OpenAI's shape: the console
// offers new-api's name and the chat model.
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const palmChannelFacts = (): ChannelFacts =>
  plainFacts({ keyHint: 'AIzaSy…', models: { fixed: ['PaLM-2', 'chat-bison-001'] } });
