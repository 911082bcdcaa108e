// Azure OpenAI (type 3): {base}/openai/deployments/{model without dots}/{task}?api-version=<channel.other or
// AZURE_DEFAULT_API_VERSION>, key in the `api-key` header. Bodies and responses are OpenAI format.
import { openaiAdaptor, parseOpenAIStyleError, splitBase } from '../openai/index.js';
import type { Adaptor } from '../types.js';

export const azureAdaptor: Adaptor = {
  supportsStreamOptions: () => true,

  target(info) {
    const { origin, prefix } = splitBase(info.channel.baseUrl);
    const version = info.channel.other.trim() || info.settings.azureDefaultApiVersion;
    const deployment = info.upstreamModel.replace(/\./g, '');
    return {
      origin,
      path: `${prefix}/openai/deployments/${encodeURIComponent(deployment)}/${info.mode.azureTask}?api-version=${encodeURIComponent(version)}`,
    };
  },

  headers(info) {
    return { 'api-key': info.channel.key };
  },

  convertRequest: openaiAdaptor.convertRequest,
  parseError: parseOpenAIStyleError,
};
