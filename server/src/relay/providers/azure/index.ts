// Azure OpenAI (type 3): {base}/openai/deployments/{model without dots}/{task}?api-version=<channel.other or
// AZURE_DEFAULT_API_VERSION>, key in the `api-key` header. Bodies and responses are OpenAI format.
// The Responses API is the exception: Azure serves it only without a deployment segment, the deployment named by the
// body's model, on the v1 surface (`/openai/v1/responses?api-version=preview`); resources on the newer
// cognitiveservices.azure.com host serve it at `/openai/responses` with the channel's dated api-version. Either way
// it is spoken natively, so a Responses client's request passes through.
import type { WireFormat } from '../../formats/codec.js';
import { openaiAdaptor, parseOpenAIStyleError, splitBase } from '../openai/index.js';
import type { Adaptor, RelayInfo } from '../types.js';

const RESPONSES: readonly WireFormat[] = ['responses'];

function responsesPath(info: RelayInfo, version: string): string {
  if (info.channel.baseUrl.includes('cognitiveservices.azure.com'))
    return `/openai/responses?api-version=${encodeURIComponent(version)}`;
  return '/openai/v1/responses?api-version=preview';
}

export const azureAdaptor: Adaptor = {
  alsoSpeaks: () => RESPONSES,

  supportsStreamOptions: () => true,

  target(info) {
    const { origin, prefix } = splitBase(info.channel.baseUrl);
    const version = info.channel.other.trim() || info.settings.azureDefaultApiVersion;
    if (info.clientFormat === 'responses') return { origin, path: prefix + responsesPath(info, version) };
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
