// Azure OpenAI (type 3): {base}/openai/deployments/{model without dots}/{task}?api-version=<channel.other or
// AZURE_DEFAULT_API_VERSION>, key in the `api-key` header. Bodies and responses are OpenAI format.
// The Responses API is the exception: Azure serves it only without a deployment segment, the deployment named by the
// body's model, on the v1 surface (`/openai/v1/responses?api-version=preview`); resources on the newer
// cognitiveservices.azure.com host serve it at `/openai/responses` with the channel's dated api-version. Either way
// it is spoken natively, so a Responses client's request passes through.
import type { WireFormat } from '../../formats/codec.js';
import { OPENAI_ENDPOINTS, splitBase } from '../openai/index.js';
import { parseOpenAIStyleError } from '../../formats/openai/errors.js';
import { defineProvider } from '../manifest.js';
import type { EndpointEntry, RelayInfo, UpstreamTarget } from '../types.js';

const RESPONSES: readonly WireFormat[] = ['responses'];

function apiVersion(info: RelayInfo): string {
  return info.channel.other.trim() || info.settings.azureDefaultApiVersion;
}

/** `{base}/openai/deployments/{model without dots}/{task}?api-version=…` */
function deploymentTarget(task: string): (info: RelayInfo) => UpstreamTarget {
  return (info) => {
    const { origin, prefix } = splitBase(info.channel.baseUrl);
    const deployment = info.upstreamModel.replace(/\./g, '');
    return {
      origin,
      path: `${prefix}/openai/deployments/${encodeURIComponent(deployment)}/${task}?api-version=${encodeURIComponent(apiVersion(info))}`,
    };
  };
}

function responsesTarget(info: RelayInfo): UpstreamTarget {
  const { origin, prefix } = splitBase(info.channel.baseUrl);
  if (info.channel.baseUrl.includes('cognitiveservices.azure.com'))
    return { origin, path: `${prefix}/openai/responses?api-version=${encodeURIComponent(apiVersion(info))}` };
  return { origin, path: `${prefix}/openai/v1/responses?api-version=preview` };
}

/** OpenAI's endpoints, each at its deployment task; chat and completions keep OpenAI's o1/o3 body rules. */
const deployment = (task: string, openai: EndpointEntry = {}): EndpointEntry => ({
  convertRequest: openai.convertRequest,
  target: deploymentTarget(task),
});

export const azureAdaptor = defineProvider({
  id: 'azure',
  types: [3],
  endpoints: {
    chat: deployment('chat/completions', OPENAI_ENDPOINTS.chat),
    completions: deployment('completions', OPENAI_ENDPOINTS.completions),
    embeddings: deployment('embeddings'),
    edits: deployment('edits'),
    images: deployment('images/generations'),
    image_edits: deployment('images/edits'),
    audio_speech: deployment('audio/speech'),
    audio_transcription: deployment('audio/transcriptions'),
    audio_translation: deployment('audio/translations'),
    rerank: deployment('rerank'),
    moderations: deployment('moderations'),
    responses: { target: responsesTarget },
  },
  alsoSpeaks: () => RESPONSES,
  supportsStreamOptions: () => true,
  headers: (info) => ({ 'api-key': info.channel.key }),
  parseError: parseOpenAIStyleError,
});
