// Channel facts of Ollama: its key is whatever the server in front of it expects, with no format of its own.
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const ollamaChannelFacts = (): ChannelFacts => plainFacts();
